package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-008

test_state008_serializer_changed if {
	inp := _td_op_in(0, {"serializer": "kryo"})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].serializer"
	f.evidence == {"uid": "orders-dedup", "base_uid": "orders-dedup", "field": "serializer", "base": "avro", "head": "kryo"}
	count(lib.rule_paths(denied, "SW-STATE-008")) == 1
}

test_state008_serializer_changed_even_with_bump if {
	inp := _td_op_in(0, {"serializer": "pojo", "schema_version": 4})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].serializer"}
}

test_state008_key_changed if {
	inp := _td_op_in(0, {"key": ["order_id", "customer_id"]})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].key"
	f.evidence.base == ["order_id"]
	contains(f.message, "key schema evolution")
}

test_state008_key_order_counts if {
	base := object.union(lib.example_contract, {"state": {"operators": _td_ops(0, object.union(lib.example_contract.state.operators[0], {"key": ["a", "b"]}))}})
	head := object.union(lib.example_contract, {"state": {"operators": _td_ops(0, object.union(lib.example_contract.state.operators[0], {"key": ["b", "a"]}))}})
	inp := lib.diff_input(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].key"}
}

test_state008_kind_changed_without_bump if {
	inp := _td_op_in(0, {"kind": "operator"})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].kind"
	f.evidence.base_schema_version == 3
	f.evidence.schema_version == 3
}

test_state008_kind_changed_with_bump_passes if {
	inp := _td_op_in(0, {"kind": "broadcast", "schema_version": 4})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_kind_changed_with_lower_version if {
	inp := _td_op_in(0, {"kind": "broadcast", "schema_version": 2})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].kind"}
}

test_state008_kind_changed_version_declared_for_the_first_time if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed"}]}}
	head := {"state": {"operators": [{"uid": "a", "kind": "operator", "schema_version": 1}]}}
	inp := lib.diff_input(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_kind_changed_no_versions_at_all if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed"}]}}
	head := {"state": {"operators": [{"uid": "a", "kind": "operator"}]}}
	inp := lib.diff_input(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	contains(f.message, "keeps schema_version null")
}

test_state008_matched_through_restores_from if {
	ops := _td_ops(0, {"uid": "orders-dedup-v2", "restores_from": "orders-dedup", "kind": "keyed", "key": ["order_id"], "serializer": "pojo", "schema_version": 3})
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].serializer"
	f.evidence.uid == "orders-dedup-v2"
	f.evidence.base_uid == "orders-dedup"
}

test_state008_uid_match_beats_restores_from if {
	# orders-enrich-join keeps its uid; its restores_from names orders-dedup's uid by mistake.
	ops := _td_ops(1, object.union(lib.example_contract.state.operators[1], {"restores_from": "orders-dedup"}))
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_one_finding_per_change if {
	inp := _td_op_in(0, {"serializer": "kryo", "key": ["customer_id"], "kind": "operator"})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].serializer", "state.operators[0].key", "state.operators[0].kind"}
}

test_state008_undeclared_values_are_not_changes if {
	head_op := json.remove(lib.example_contract.state.operators[0], ["serializer", "key"])
	inp := _td_in({"state": {"operators": _td_ops(0, head_op)}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
	base := object.union(lib.example_contract, {"state": {"operators": _td_ops(0, head_op)}})
	inp2 := lib.diff_input(base, lib.example_contract)
	denied2 := deny with input as inp2
	lib.no_rule(denied2, "SW-STATE-008")
}

test_state008_new_operator_passes if {
	ops := array.concat(lib.example_contract.state.operators, [{"uid": "brand-new", "kind": "keyed", "serializer": "kryo"}, {"kind": "keyed"}])
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_duplicate_base_uids_first_wins if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed", "serializer": "avro"}, {"uid": "a", "kind": "keyed", "serializer": "pojo"}]}}
	head := {"state": {"operators": [{"uid": "a", "kind": "keyed", "serializer": "avro"}]}}
	inp := lib.diff_input(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}
