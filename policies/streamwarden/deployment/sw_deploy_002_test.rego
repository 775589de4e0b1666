package streamwarden.deployment

import rego.v1

test_deploy_002_says_which_value_flink_uses_and_why if {
	in8 := fx_facts_input(fx_contract, {"conflicts": [fx_conflict]})
	fs := warn with input as in8
	[f] := fx_of("SW-DEPLOY-002", fs)
	f.file == "deploy/fd.yaml"
	f.line == 12
	f.path == "execution.checkpointing.num-retained"
	contains(f.message, "Flink uses 5 from execution.checkpointing.num-retained")
	contains(f.message, "2.x key always takes precedence")
}

test_deploy_002_between_two_aliases if {
	c := object.union(fx_conflict, {"wins": "state.checkpoints.dir", "wins_by": "fallback-order", "key": "execution.checkpointing.dir"})
	in9 := fx_facts_input(fx_contract, {"conflicts": [c]})
	fs := warn with input as in9
	[f] := fx_of("SW-DEPLOY-002", fs)
	contains(f.message, "falls back to its deprecated keys in a fixed order, state.checkpoints.dir first")
}
