package streamwarden.state

import rego.v1

import data.streamwarden.lib

test_state009_all_stateful_operators_claimed_passes if {
	inp := _st_input({}, [_st_dedup, _st_source])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-009")
}

test_state009_unclaimed_operator_names_recorded_uid_and_closest_declared_uid if {
	inp := _st_input({}, [_st_source, _st_orphan])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-STATE-009") == {"state.operators[0].uid"}
	some f in findings
	f.rule == "SW-STATE-009"
	f.value == "9c1e2f0a4b5d6e7f8a9b0c1d2e3f4a5b"
	f.source == "savepoint"
	f.message == "savepoint s3://lake-savepoints/orders/savepoint-4d986c-1a2b3c4d5e6f (checkpoint 12) holds state for operator 9c1e2f0a4b5d6e7f8a9b0c1d2e3f4a5b (uid \"orders-dedupe\") that no declared uid hashes to: Flink would refuse the restore (state.allow_non_restored_state is false); closest declared uid: \"orders-dedup\" at state.operators[0].uid (edit distance 1)"
}

test_state009_unclaimed_operator_without_recorded_uid_lists_the_declared_uids_it_lacks if {
	anon := _st_op("aa000000000000000000000000000001", null, {
		"name": null,
		"matched": null,
		"candidates": [{"uid": "orders-enrich-join", "path": "state.operators[1].uid", "operator_id": "bb"}],
		"closest": {"uid": "orders-enrich-join", "distance": null, "path": "state.operators[1].uid", "operator_id": "bb"},
	})
	inp := _st_input({}, [anon])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-009"
	f.path == "state.operators[1].uid"
	endswith(f.message, "holds state for operator aa000000000000000000000000000001 that no declared uid hashes to: Flink would refuse the restore (state.allow_non_restored_state is false); declared uids with no state in the savepoint: \"orders-enrich-join\" at state.operators[1].uid")
}

test_state009_no_candidate_asks_to_declare_the_uid if {
	anon := _st_op("aa000000000000000000000000000002", null, {"name": "Map", "matched": null})
	inp := _st_input({}, [anon])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-009"
	f.path == "state.operators"
	contains(f.message, "(name \"Map\")")
	endswith(f.message, "no declared uid is a candidate: declare this operator's uid (or its restores_from)")
}

test_state009_stateless_unclaimed_operator_is_ignored if {
	stateless := object.union(_st_orphan, {"has_state": false})
	inp := _st_input({}, [_st_dedup, stateless])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-009")
}

test_state009_allow_non_restored_state_silences if {
	inp := _st_input({"state": {"allow_non_restored_state": true}}, [_st_orphan])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-009")
}

test_state009_absent_allow_flag_counts_as_false if {
	contract := json.remove(lib.example_contract, ["state/allow_non_restored_state"])
	not contract.state.allow_non_restored_state
	inp := _st_input_with(contract, [_st_orphan])
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-STATE-009")) == 1
}

test_state009_silent_when_the_savepoint_is_unreadable if {
	inp := _st_input({}, [])
	broken := json.patch(inp, [{"op": "replace", "path": "/facts/savepoint", "value": {"available": false, "configured": true, "error": "truncated"}}])
	findings := deny with input as broken
	lib.no_rule(findings, "SW-STATE-009")
	lib.no_rule(findings, "SW-STATE-010")
}
