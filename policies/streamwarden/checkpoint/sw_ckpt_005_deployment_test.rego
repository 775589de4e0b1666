package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-CKPT-005 ---------------------------------------------------------------------------------

test_dep_ckpt_005_default_retention_with_a_rollback_window if {
	key := "execution.checkpointing.externalized-checkpoint-retention"
	in20 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, "no_externalized_checkpoints")})
	fs := deny with input as in20
	[f] := dep.fx_of("SW-CKPT-005", fs)
	f.line == 7
	contains(f.message, "retention.rollback_window is 3d")
}

test_dep_ckpt_005_declared_retention_without_a_window if {
	key := "execution.checkpointing.externalized-checkpoint-retention"
	contract := json.remove(dep.fx_contract, ["retention"])
	in21 := dep.fx_input(contract, {key: dep.fx_set(key, "delete_on_cancellation", 15)})
	fs := deny with input as in21
	[f] := dep.fx_of("SW-CKPT-005", fs)
	f.line == 15
	contains(f.message, "checkpoint.externalized retain_on_cancellation")
}

test_dep_ckpt_005_quiet_without_a_need if {
	key := "execution.checkpointing.externalized-checkpoint-retention"
	contract := json.remove(dep.fx_contract, ["retention", "checkpoint/externalized"])
	in22 := dep.fx_input(contract, {key: dep.fx_default(key, "no_externalized_checkpoints")})
	count(dep.fx_of("SW-CKPT-005", deny)) == 0 with input as in22
}
