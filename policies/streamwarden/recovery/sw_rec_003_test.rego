package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

test_rec003_fresh_savepoint_passes if {
	inp := _rgt_input(_rgt_sp({}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_savepoint_exactly_max_age_old_passes if {
	inp := _rgt_input(_rgt_sp({"completed_ms": _rgt_now - (30 * _rgt_day)}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_savepoint_older_than_max_age if {
	inp := _rgt_input(_rgt_sp({"completed_ms": (_rgt_now - (30 * _rgt_day)) - 1000}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-003") == {"retention.savepoints.max_age"}
	some f in findings
	f.rule == "SW-REC-003"
	f.message == "the savepoint to restore (file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f, checkpoint 12) completed 30d1s ago, older than retention.savepoints.max_age 30d"
}

test_rec003_unknown_age_fails_closed if {
	inp := _rgt_input(_rgt_sp({"completed_ms": null}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-003"
	startswith(f.message, "the age of file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f (checkpoint 12) is unknown")
}

test_rec003_unknown_age_without_max_age_is_silent if {
	contract := json.remove(lib.example_contract, ["retention/savepoints"])
	inp := json.patch(_rgt_input(_rgt_sp({"completed_ms": null})), [{"op": "replace", "path": "/contract", "value": contract}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_gate_without_any_savepoint_for_a_stateful_pipeline if {
	inp := _rgt_input({"available": false, "configured": false})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-003") == {"retention.savepoints.max_age"}
}

test_rec003_missing_savepoint_outside_the_gate_is_silent if {
	inp := json.patch(_rgt_input({"available": false, "configured": false}), [{"op": "replace", "path": "/mode", "value": "check"}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_missing_savepoint_for_a_stateless_pipeline_is_silent if {
	contract := json.remove(lib.example_contract, ["state/operators"])
	inp := json.patch(_rgt_input({"available": false, "configured": false}), [{"op": "replace", "path": "/contract", "value": contract}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_unreadable_savepoint_is_left_to_fact001 if {
	inp := _rgt_input({"available": false, "configured": true, "error": "truncated"})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}
