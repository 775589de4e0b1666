package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-STATE-001 --------------------------------------------------------------------------------

test_dep_state_001_generated_uids_by_default if {
	key := "pipeline.auto-generate-uids"
	in3 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, true)})
	fs := deny with input as in3
	[f] := dep.fx_of("SW-STATE-001", fs)
	f.line == 7
	f.path == key
	contains(f.message, "leaves pipeline.auto-generate-uids unset, so Flink uses its default true")
}

test_dep_state_001_generated_uids_set_explicitly if {
	key := "pipeline.auto-generate-uids"
	in4 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, true, 23)})
	fs := deny with input as in4
	[f] := dep.fx_of("SW-STATE-001", fs)
	f.line == 23
}

test_dep_state_001_quiet_when_uids_are_allowed if {
	key := "pipeline.auto-generate-uids"
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/state/auto_generated_uids", "value": "allowed"}])
	in5 := dep.fx_input(contract, {key: dep.fx_default(key, true)})
	count(dep.fx_of("SW-STATE-001", deny)) == 0 with input as in5
}
