package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-SCHEMA-005

test_schema005_rename_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, _te_set(_te_fields, 2, {"name": "gross_amount"}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-005"
		f.path == "table.schema[2].name"
		f.evidence == {"base_name": "amount", "head_name": "gross_amount", "paired_by": "id", "allow_renames": false, "compatibility": mode}
	}
}

test_schema005_rename_with_renamed_from if {
	inp := _te_in("none", _te_set(_te_fields, 3, {"name": "qty", "renamed_from": "quantity"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-005"
	f.evidence.paired_by == "renamed_from"
	contains(f.message, `field "quantity" was renamed to "qty"`)
}

test_schema005_allowed_renames_pass if {
	base := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"allow_renames": true}})
	head := object.union(_te_contract(_te_set(_te_fields, 2, {"name": "gross_amount"}), "full"), {"schema_evolution": {"allow_renames": true}})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema005_allowing_renames_in_the_same_pr_does_not_count if {
	head := object.union(_te_contract(_te_set(_te_fields, 2, {"name": "gross_amount"}), "full"), {"schema_evolution": {"allow_renames": true}})
	inp := _te_in2(_te_contract(_te_fields, "full"), head)
	denied := deny with input as inp
	warned := warn with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-005") == {"table.schema[2].name"}
	lib.rule_paths(warned, "SW-SCHEMA-009") == {"schema_evolution.allow_renames"}
}

test_schema005_stale_renamed_from_is_not_a_rename if {
	# renamed_from names a field the base no longer has: paired by name, no rename.
	inp := _te_in("none", _te_set(_te_fields, 3, {"renamed_from": "qty_old"}))
	denied := deny with input as inp
	count(denied) == 0
}

test_schema005_renamed_from_itself_is_ignored if {
	inp := _te_in("none", _te_set(_te_fields, 3, {"renamed_from": "quantity"}))
	denied := deny with input as inp
	count(denied) == 0
}

test_schema005_swap_by_renamed_from_claims_the_old_name if {
	# head: note renamed_from quantity, plus a new field named quantity (a new column).
	fields := array.concat(
		_te_set(_te_drop(_te_fields, 3), 4, {"name": "quantity_note", "renamed_from": "quantity", "type": "int"}),
		[{"name": "quantity", "type": "string"}],
	)
	base := _te_contract(_te_fields, "full")
	inp := _te_in2(base, _te_contract(fields, "full"))
	denied := deny with input as inp
	# quantity -> quantity_note (rename), note removed (optional), new optional quantity.
	lib.rule_paths(denied, "SW-SCHEMA-005") == {"table.schema[4].name"}
	lib.no_rule(denied, "SW-SCHEMA-002")
}

test_schema005_id_claim_beats_name_pairing if {
	# head gives the id of customer_id (2) to a field named order_id; base order_id has id 1.
	base := _te_contract([{"name": "order_id", "type": "long"}, {"name": "customer_id", "type": "long", "id": 2}], "none")
	head := _te_contract([{"name": "order_id", "type": "long", "id": 2}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-005"
	f.evidence.base_name == "customer_id"
	f.evidence.head_name == "order_id"
}

test_schema005_renamed_from_with_conflicting_ids_does_not_pair if {
	base := _te_contract([{"name": "a", "type": "long", "id": 1}], "none")
	head := _te_contract([{"name": "b", "type": "long", "id": 7, "renamed_from": "a"}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-005")
}

test_schema005_duplicate_head_names_first_wins if {
	base := _te_contract([{"name": "a", "type": "long"}], "none")
	head := _te_contract([{"name": "a", "type": "long"}, {"name": "a", "type": "string"}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}
