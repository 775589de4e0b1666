package streamwarden.schema

import rego.v1

import data.streamwarden.lib

test_schema012_a_removed_column_under_every_mode if {
	every mode in _te_all_modes {
		base := _te_consumed(_te_contract(_te_fields, mode))
		head := _te_consumed(_te_contract(_te_drop(_te_fields, 5), mode))
		inp := _te_in2(base, head)
		[f] := _te_012(deny) with input as inp
		f.path == "table.schema"
		f.value == "note"
		f.evidence == {
			"field": "note", "consumers": ["finance-dashboard", "fraud-features"],
			"protect_consumers": null, "compatibility": mode, "base_ref": "origin/main",
		}
		contains(f.message, sprintf(`column "note" was removed, but the table's consumers (finance-dashboard, fraud-features) read it and schema_evolution.protect_consumers is in force in the base (origin/main) (compatibility %s)`, [mode]))
	}
}

test_schema012_an_absent_section_protects_the_consumers if {
	base := _te_consumed(json.remove(_te_contract(_te_fields, "full"), ["schema_evolution"]))
	head := _te_consumed(json.remove(_te_contract(_te_drop(_te_fields, 2), "full"), ["schema_evolution"]))
	inp := _te_in2(base, head)
	denied := deny with input as inp
	[f] := _te_012(denied)
	f.value == "amount"
	f.evidence.compatibility == "backward"
	lib.rule_ids(denied) == {"SW-SCHEMA-012"}
}

test_schema012_a_required_removal_under_forward_is_schema001_alone if {
	# order_date is required: under forward and full SW-SCHEMA-001 reports it, under backward and none SW-SCHEMA-012
	every mode in _te_all_modes {
		base := _te_consumed(_te_contract(_te_fields, mode))
		head := _te_consumed(_te_contract(_te_drop(_te_fields, 4), mode))
		inp := _te_in2(base, head)
		denied := deny with input as inp
		forward := mode in {"forward", "full", "forward_transitive", "full_transitive"}
		lib.rule_ids(denied) == {true: {"SW-SCHEMA-001"}, false: {"SW-SCHEMA-012"}}[forward]
	}
}

test_schema012_required_made_optional if {
	every mode in _te_all_modes {
		base := _te_consumed(_te_contract(_te_fields, mode))
		head := _te_consumed(_te_contract(_te_set(_te_fields, 1, {"required": false}), mode))
		inp := _te_in2(base, head)
		[f] := _te_012(deny) with input as inp
		f.path == "table.schema[1].required"
		f.value == "customer_id"
		f.evidence.base_required == true
		f.evidence.head_required == false
		contains(f.message, `column "customer_id" is required in the base (origin/main) and optional now, but the table's consumers (finance-dashboard, fraud-features) read it`)
	}
	# the required key left out reads as optional too
	head2 := _te_consumed(_te_contract(json.patch(_te_fields, [{"op": "remove", "path": "/1/required"}]), "backward"))
	inp2 := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), head2)
	[g] := _te_012(deny) with input as inp2
	g.evidence.head_required == null
}

test_schema012_quiet_without_consumers if {
	head_fields := _te_drop(_te_fields, 5)
	none_declared := _te_in2(_te_contract(_te_fields, "backward"), _te_contract(head_fields, "backward"))
	count(_te_012(deny)) == 0 with input as none_declared
	empty := {"metadata": {"name": "orders", "consumers": []}}
	inp2 := _te_in2(object.union(_te_contract(_te_fields, "backward"), empty), _te_consumed(_te_contract(head_fields, "backward")))
	count(_te_012(deny)) == 0 with input as inp2
	junk := {"metadata": {"name": "orders", "consumers": "finance"}}
	inp3 := _te_in2(object.union(_te_contract(_te_fields, "backward"), junk), _te_contract(head_fields, "backward"))
	count(_te_012(deny)) == 0 with input as inp3
	unnamed := {"metadata": {"name": "orders", "consumers": [{"contact": "x"}, "y"]}}
	inp4 := _te_in2(object.union(_te_contract(_te_fields, "backward"), unnamed), _te_contract(head_fields, "backward"))
	count(_te_012(deny)) == 0 with input as inp4
}

test_schema012_a_rename_is_not_a_removal if {
	# by id, renames allowed: no finding
	allowed := {"schema_evolution": {"allow_renames": true}}
	base := object.union(_te_consumed(_te_contract(_te_fields, "backward")), allowed)
	head := object.union(_te_consumed(_te_contract(_te_set(_te_fields, 2, {"name": "gross_amount"}), "backward")), allowed)
	inp := _te_in2(base, head)
	count(_te_012(deny)) == 0 with input as inp
	# no id and no renamed_from: read as a removal plus an addition
	head2 := _te_consumed(_te_contract(_te_set(_te_fields, 5, {"name": "remark"}), "backward"))
	inp2 := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), head2)
	[f] := _te_012(deny) with input as inp2
	f.value == "note"
}

test_schema012_quiet_for_another_table_or_a_new_contract if {
	other := _te_with_table(_te_consumed(_te_contract(_te_drop(_te_fields, 5), "backward")), {"identifier": "sales.other"})
	inp := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), other)
	count(_te_012(deny)) == 0 with input as inp
	added := {"contract": _te_consumed(_te_contract(_te_drop(_te_fields, 5), "backward")), "base": {"status": "added", "contract": null}}
	count(_te_012(deny)) == 0 with input as added
}
