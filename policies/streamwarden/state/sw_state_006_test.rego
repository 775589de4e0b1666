package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-006

test_state006_operator_uid_removed if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-006"
	f.path == "state.operators"
	f.value == "orders-dedup"
	f.evidence == {"uid": "orders-dedup", "base_section": "state.operators", "listed_in_dropped": false, "allow_non_restored_state": false}
	contains(f.message, `uid "orders-dedup" (state.operators in the base (origin/main)) is gone`)
	contains(f.message, "declare restores_from")
}

test_state006_operator_renamed_without_restores_from if {
	inp := _td_op_in(0, {"uid": "orders-dedup-v2"})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"state.operators"}
}

test_state006_renamed_with_restores_from_passes if {
	inp := _td_op_in(0, {"uid": "orders-dedup-v2", "restores_from": "orders-dedup"})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_dropped_with_allow_non_restored_state_passes if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops, "dropped": [{"uid": "orders-dedup", "reason": "dedup moved upstream"}], "allow_non_restored_state": true}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_dropped_without_allow_non_restored_state if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops, "dropped": [{"uid": "orders-dedup"}]}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-006"
	f.evidence.listed_in_dropped == true
	contains(f.message, "allow_non_restored_state is not true")
}

test_state006_allow_non_restored_state_without_dropped_entry if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops, "allow_non_restored_state": true, "dropped": [{"uid": "other"}]}})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"state.operators"}
}

test_state006_source_and_sink_uids if {
	inp := _td_in({"job": {"sources": [{"name": "orders-topic", "uid": "orders-source-v2"}], "sinks": [{"name": "orders-table"}]}})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"job.sources", "job.sinks"}
	some f in denied
	f.path == "job.sinks"
	f.value == "orders-iceberg-sink"
}

test_state006_uid_moved_between_sections_passes if {
	# the sink uid is now declared as an operator, the source uid is claimed by restores_from
	ops := array.concat(lib.example_contract.state.operators, [
		{"uid": "orders-iceberg-sink", "kind": "operator"},
		{"uid": "kafka-src", "restores_from": "orders-source", "kind": "operator"},
	])
	inp := _td_in({"state": {"operators": ops}, "job": {"sources": [], "sinks": []}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_base_restores_from_is_not_a_uid if {
	# base orders-enrich-join restores from orders-join; head drops the restores_from: fine.
	inp := _td_op_in(1, {"restores_from": null})
	head := json.remove(inp.contract, ["state/operators/1/restores_from"])
	inp2 := {"contract": head, "base": inp.base}
	denied := deny with input as inp2
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_blank_and_missing_uids_are_ignored if {
	# (head holds no operators: the contract side's rules read head operators as objects)
	base := {"state": {"operators": [{"kind": "keyed"}, {"uid": " ", "kind": "keyed"}, "junk"]}, "job": {"sources": "x"}}
	inp := lib.diff_input(base, {"state": {"operators": []}})
	denied := deny with input as inp
	count(_td_diff_findings(denied)) == 0
}

test_state006_head_without_state_section if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed"}]}}
	inp := lib.diff_input(base, {"job": {"name": "x"}})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"state.operators"}
}
