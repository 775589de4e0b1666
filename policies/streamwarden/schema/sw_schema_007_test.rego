package streamwarden.schema

import rego.v1

import data.streamwarden.lib

test_schema007_schema_changed_without_bump if {
	base := _te_coordinated(_te_fields, 1)
	head := _te_coordinated(array.concat(_te_fields, [{"name": "channel", "type": "string"}]), 1)
	inp := _te_in2(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-007"
	f.path == "state.operators[1].schema_version"
	f.evidence.table_changes == ["added channel"]
	f.evidence.uid == "orders-enrich-join"
	count(lib.rule_paths(denied, "SW-SCHEMA-007")) == 1
}

test_schema007_each_kind_of_change_counts if {
	base := _te_coordinated(_te_fields, 1)
	changes := [
		[_te_drop(_te_fields, 5), "removed note"],
		[_te_set(_te_fields, 2, {"name": "gross"}), "renamed amount to gross"],
		[_te_set(_te_fields, 3, {"type": "long"}), "type of quantity int -> long"],
		[_te_set(_te_fields, 5, {"required": true}), "note made required"],
		[_te_set(_te_fields, 0, {"required": false}), "order_id made optional"],
	]
	every c in changes {
		[fields, text] := c
		inp := _te_in2(base, _te_coordinated(fields, 1))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-007"
		f.evidence.table_changes == [text]
	}
}

test_schema007_bump_passes if {
	base := _te_coordinated(_te_fields, 1)
	head := _te_coordinated(array.concat(_te_fields, [{"name": "channel", "type": "string"}]), 2)
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema007_doc_default_and_order_edits_are_not_changes if {
	base := _te_coordinated(_te_fields, 1)
	fields := array.concat(array.slice(_te_set(_te_set(_te_fields, 5, {"doc": "new"}), 2, {"default": 0}), 1, 6), [_te_fields[0]])
	head := _te_coordinated(fields, 1)
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema007_needs_coordinate_with_state_at_base if {
	base := object.union(_te_coordinated(_te_fields, 1), {"schema_evolution": {"coordinate_with_state": false}})
	head := _te_coordinated(array.concat(_te_fields, [{"name": "channel", "type": "string"}]), 1)
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-007")
	warned := warn with input as inp
	lib.no_rule(warned, "SW-SCHEMA-009")
}

test_schema007_matched_through_restores_from if {
	base := _te_coordinated(_te_fields, 1)
	head_ops := {"operators": [{"uid": "orders-join-v2", "restores_from": "orders-enrich-join", "kind": "keyed", "schema_version": 1, "carries_table_schema": true}]}
	head := object.union(_te_coordinated(_te_drop(_te_fields, 5), 1), {"state": head_ops})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-007"
	f.path == "state.operators[0].schema_version"
	f.evidence.base_uid == "orders-enrich-join"
}

test_schema007_new_operator_passes if {
	base := _te_coordinated(_te_fields, 1)
	head_ops := {"operators": [{"uid": "brand-new", "kind": "keyed", "schema_version": 1, "carries_table_schema": true}, "junk"]}
	head := object.union(_te_coordinated(_te_drop(_te_fields, 5), 1), {"state": head_ops})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema007_absent_versions_count_as_kept if {
	base := object.union(_te_contract(_te_fields, "none"), {"schema_evolution": {"coordinate_with_state": true}, "state": {"operators": [{"uid": "j", "kind": "keyed", "carries_table_schema": true}]}})
	head := object.union(_te_contract(_te_drop(_te_fields, 5), "none"), {"schema_evolution": {"coordinate_with_state": true}, "state": {"operators": [{"uid": "j", "kind": "keyed", "carries_table_schema": true}]}})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-007"
	contains(f.message, "schema_version stayed null")
}

test_schema007_many_changes_are_shortened_in_the_message if {
	base := _te_coordinated(_te_fields, 1)
	head := _te_coordinated([{"name": "a", "type": "int"}], 1)
	inp := _te_in2(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-007"
	count(f.evidence.table_changes) == 7
	contains(f.message, ", ...)")
}

test_schema007_duplicate_base_uids_first_wins if {
	ops := {"operators": [
		{"uid": "j", "kind": "keyed", "schema_version": 1, "carries_table_schema": true},
		{"uid": "j", "kind": "keyed", "schema_version": 2, "carries_table_schema": true},
	]}
	base := object.union(_te_contract(_te_fields, "none"), {"schema_evolution": {"coordinate_with_state": true}, "state": ops})
	head := object.union(_te_contract(_te_drop(_te_fields, 5), "none"), {"state": {"operators": [{"uid": "j", "kind": "keyed", "schema_version": 2, "carries_table_schema": true}]}})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-007")
}

test_schema007_operators_not_a_list if {
	base := object.union(_te_contract(_te_fields, "none"), {"schema_evolution": {"coordinate_with_state": true}, "state": {"operators": "x"}})
	head := object.union(_te_contract(_te_drop(_te_fields, 5), "none"), {"state": {"operators": "x"}})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}
