package streamwarden.deployment

import rego.v1

# --- SW-DEPLOY-003 and 004 ---------------------------------------------------------------------

test_deploy_003_unparseable_value if {
	p := {
		"file": "deploy/fd.yaml", "line": 10, "code": "invalid-value", "severity": "error",
		"key": "execution.checkpointing.interval", "raw": "1h 30min",
		"message": "execution.checkpointing.interval: '1h 30min' is not a duration",
	}
	in10 := fx_facts_input(fx_contract, {"problems": [p]})
	fs := deny with input as in10
	[f] := fx_of("SW-DEPLOY-003", fs)
	f.line == 10
	f.value == "1h 30min"
	contains(f.message, "Flink would refuse to start the job")
	in11 := fx_facts_input(fx_contract, {"problems": [p]})
	count(fx_of("SW-DEPLOY-004", warn)) == 0 with input as in11
}
