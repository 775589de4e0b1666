package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-CKPT-006 ---------------------------------------------------------------------------------

test_dep_ckpt_006_fewer_retained_than_the_contract if {
	in23 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.num-retained": dep.fx_set("state.checkpoints.num-retained", 2, 16)})
	fs := warn with input as in23
	[f] := dep.fx_of("SW-CKPT-006", fs)
	f.line == 16
	f.evidence.required == 3
}

test_dep_ckpt_006_rollback_window_needs_two if {
	contract := json.remove(dep.fx_contract, ["retention/checkpoints", "checkpoint/num_retained"])
	key := "execution.checkpointing.num-retained"
	in24 := dep.fx_input(contract, {key: dep.fx_default(key, 1)})
	fs := warn with input as in24
	[f] := dep.fx_of("SW-CKPT-006", fs)
	f.evidence.required == 2
	contains(f.message, "Flink uses its default 1")
	in25 := dep.fx_input(contract, {key: dep.fx_set(key, 2, 16)})
	count(dep.fx_of("SW-CKPT-006", warn)) == 0 with input as in25
}
