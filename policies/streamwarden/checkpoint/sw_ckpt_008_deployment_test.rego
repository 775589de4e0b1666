package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-CKPT-008 ---------------------------------------------------------------------------------

test_dep_ckpt_008_above_the_contract if {
	key := "execution.checkpointing.tolerable-failed-checkpoints"
	in28 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, 10, 20)})
	fs := warn with input as in28
	[f] := dep.fx_of("SW-CKPT-008", fs)
	f.line == 20
	contains(f.message, "above the contract's checkpoint.tolerable_failures 3")
}

test_dep_ckpt_008_unlimited_without_a_contract_value if {
	key := "execution.checkpointing.tolerable-failed-checkpoints"
	in29 := dep.fx_input(dep.fx_stateless, {key: dep.fx_set(key, 2147483647, 20)})
	fs := warn with input as in29
	[f] := dep.fx_of("SW-CKPT-008", fs)
	contains(f.message, "unlimited")
}

test_dep_ckpt_008_quiet_at_or_below_the_contract if {
	key := "execution.checkpointing.tolerable-failed-checkpoints"
	in30 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, 3, 20)})
	count(dep.fx_of("SW-CKPT-008", warn)) == 0 with input as in30
	in31 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, 0)})
	count(dep.fx_of("SW-CKPT-008", warn)) == 0 with input as in31
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/checkpoint/tolerable_failures", "value": -1}])
	in32 := dep.fx_input(contract, {key: dep.fx_set(key, 10, 20)})
	count(dep.fx_of("SW-CKPT-008", warn)) == 0 with input as in32
}
