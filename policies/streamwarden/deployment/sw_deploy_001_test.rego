package streamwarden.deployment

import rego.v1

# --- SW-DEPLOY-001 -----------------------------------------------------------------------------

test_deploy_001_unknown_key_with_suggestion if {
	u := {"key": "execution.checkpointing.intervall", "file": "deploy/fd.yaml", "line": 30, "suggestion": "execution.checkpointing.interval"}
	in5 := fx_facts_input(fx_contract, {"unknown_keys": [u]})
	fs := warn with input as in5
	[f] := fx_of("SW-DEPLOY-001", fs)
	f.line == 30
	f.path == "execution.checkpointing.intervall"
	contains(f.message, "did you mean execution.checkpointing.interval?")
}

test_deploy_001_unknown_key_without_suggestion if {
	u := {"key": "foo.bar", "file": "deploy/job.sql", "line": 3}
	in6 := fx_facts_input(fx_contract, {"unknown_keys": [u]})
	fs := warn with input as in6
	[f] := fx_of("SW-DEPLOY-001", fs)
	not contains(f.message, "did you mean")
	f.file == "deploy/job.sql"
	# a key the job's own code reads: the message says how to declare it
	contains(f.message, "declare it in streamwarden.yaml (flink: {known_keys: [foo.bar]})")
}

test_deploy_001_quiet_without_unknown_keys if {
	in7 := fx_input(fx_contract, {})
	fs := warn with input as in7
	count(fx_of("SW-DEPLOY-001", fs)) == 0
}
