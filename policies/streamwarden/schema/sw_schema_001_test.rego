package streamwarden.schema

import rego.v1

import data.streamwarden.lib

test_evo_history_not_a_list_is_ignored if {
	head := _te_contract(_te_drop(_te_fields, 4), "full_transitive")
	base := _te_contract(_te_fields, "full_transitive")
	inp := {"contract": head, "base": object.union(_te_base_doc(base, []), {"history": "x"})}
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-001") == {"table.schema"}
}

# ---------------------------------------------------------------- SW-SCHEMA-001

test_schema001_required_field_removed_under_forward_modes if {
	every mode in ["forward", "full", "forward_transitive", "full_transitive"] {
		inp := _te_in(mode, _te_drop(_te_fields, 4))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-001"
		f.path == "table.schema"
		f.value == "order_date"
		f.evidence.compatibility == mode
		f.evidence.required_in == "the base (origin/main)"
		contains(f.message, `field "order_date" was removed`)
	}
}

test_schema001_required_field_removed_under_backward_and_none_passes if {
	every mode in ["none", "backward", "backward_transitive"] {
		inp := _te_in(mode, _te_drop(_te_fields, 4))
		denied := deny with input as inp
		lib.no_rule(denied, "SW-SCHEMA-001")
	}
}

test_schema001_rename_by_id_is_not_a_removal if {
	inp := _te_in("full", _te_set(_te_fields, 1, {"name": "buyer_id"}))
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-001")
	lib.rule_paths(denied, "SW-SCHEMA-005") == {"table.schema[1].name"}
}

test_schema001_rename_by_renamed_from_is_not_a_removal if {
	inp := _te_in("full", _te_set(_te_fields, 4, {"name": "ordered_on", "renamed_from": "order_date"}))
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-001")
	lib.rule_paths(denied, "SW-SCHEMA-005") == {"table.schema[4].name"}
}

test_schema001_rename_without_id_reads_as_removal_plus_addition if {
	inp := _te_in("full", _te_set(_te_fields, 4, {"name": "ordered_on"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-001"
	f.value == "order_date"
	lib.rule_paths(denied, "SW-SCHEMA-004") == {"table.schema[4].default"}
	lib.no_rule(denied, "SW-SCHEMA-005")
}

test_schema001_different_ids_same_name_is_removal_plus_addition if {
	inp := _te_in("forward", _te_set(_te_fields, 0, {"id": 99}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-001"
	f.value == "order_id"
	lib.rule_paths(denied, "SW-SCHEMA-004") == {"table.schema[0].default"}
}

test_schema001_id_on_one_side_pairs_by_name if {
	inp := _te_in("forward", _te_set(_te_fields, 4, {"id": 5}))
	denied := deny with input as inp
	count(denied) == 0
}

test_schema001_transitive_field_required_in_an_earlier_version if {
	optional := _te_set(_te_fields, 4, {"required": false})
	every mode in ["forward_transitive", "full_transitive"] {
		inp := _te_in_history(mode, optional, _te_drop(_te_fields, 4), _te_history)
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-001"
		f.value == "order_date"
		f.evidence.commit == "h3h3h3h3h3h3h3h3h3"
		f.evidence.required_in == "the earlier version h3h3h3h3h3h3"
		f.evidence.versions_required == 1
	}
}

test_schema001_non_transitive_ignores_history if {
	optional := _te_set(_te_fields, 4, {"required": false})
	every mode in ["forward", "full"] {
		inp := _te_in_history(mode, optional, _te_drop(_te_fields, 4), _te_history)
		denied := deny with input as inp
		lib.no_rule(denied, "SW-SCHEMA-001")
	}
}

test_schema001_transitive_counts_the_base_first if {
	inp := _te_in_history("forward_transitive", _te_fields, _te_drop(_te_fields, 4), _te_history)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-001"
	f.evidence.commit == "b0b0b0b0b0b0b0b0"
	f.evidence.versions_required == 2
}

test_schema001_transitive_field_dropped_before_base_still_fires if {
	# order_date was required in h3 and already dropped at the base.
	dropped := _te_drop(_te_fields, 4)
	inp := _te_in_history("full_transitive", dropped, dropped, _te_history)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-001") == {"table.schema"}
}

test_schema001_transitive_rename_tracked_by_id_across_history if {
	history := [{"commit": "h1", "contract": _te_contract(_te_fields, "full_transitive")}]
	head := _te_set(_te_fields, 1, {"name": "buyer_id"})
	base := head
	inp := _te_in_history("full_transitive", base, head, history)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema001_transitive_skips_history_of_another_table if {
	other := object.union(_te_contract(_te_fields, "full_transitive"), {"table": {"identifier": "sales.old_orders"}})
	optional := _te_set(_te_fields, 4, {"required": false})
	inp := _te_in_history("full_transitive", optional, _te_drop(_te_fields, 4), [{"commit": "h1", "contract": other}])
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-001")
}

test_schema001_history_without_commit_is_labelled if {
	optional := _te_set(_te_fields, 4, {"required": false})
	inp := _te_in_history("full_transitive", optional, _te_drop(_te_fields, 4), [{"contract": _te_contract(_te_fields, "x")}])
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-001"
	f.evidence.required_in == "an earlier version"
	f.evidence.commit == null
}

test_schema001_mode_in_force_is_the_base_one if {
	base := _te_contract(_te_fields, "full")
	head := _te_contract(_te_drop(_te_fields, 4), "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-001") == {"table.schema"}
}

test_schema001_absent_section_means_backward if {
	base := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution"])
	head := json.remove(_te_contract(_te_drop(_te_fields, 4), "full"), ["schema_evolution"])
	inp := _te_in2(base, head)
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}
