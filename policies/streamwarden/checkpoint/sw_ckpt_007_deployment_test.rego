package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-CKPT-007 ---------------------------------------------------------------------------------

test_dep_ckpt_007_at_least_once_with_exactly_once_sinks if {
	contract := json.remove(dep.fx_contract, ["checkpoint/mode"])
	in26 := dep.fx_input(contract, {"execution.checkpointing.mode": dep.fx_set("execution.checkpointing.mode", "at_least_once", 11)})
	fs := deny with input as in26
	[f] := dep.fx_of("SW-CKPT-007", fs)
	f.line == 11
	contains(f.message, "orders-table")
	count(dep.fx_of("SW-CKPT-003", fs)) == 0
}

test_dep_ckpt_007_quiet_without_exactly_once_sinks if {
	in27 := dep.fx_input(dep.fx_stateless, {"execution.checkpointing.mode": dep.fx_set("execution.checkpointing.mode", "at_least_once", 11)})
	fs := deny with input as in27
	count(dep.fx_of("SW-CKPT-007", fs)) == 0
}
