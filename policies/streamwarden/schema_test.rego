package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

# A small base table: ids on some fields, none on others (pairing by name).
_te_fields := [
	{"name": "order_id", "type": "long", "required": true, "id": 1},
	{"name": "customer_id", "type": "long", "required": true, "id": 2},
	{"name": "amount", "type": "decimal(12,2)", "id": 3},
	{"name": "quantity", "type": "int"},
	{"name": "order_date", "type": "date", "required": true},
	{"name": "note", "type": "string", "doc": "free text"},
]

_te_contract(fields, mode) := {
	"table": {
		"identifier": "sales.orders",
		"format_version": 2,
		"schema": fields,
		"partition_spec": [{"source": "order_date", "transform": "day"}],
	},
	"schema_evolution": {"compatibility": mode, "allow_renames": false, "coordinate_with_state": false},
}

_te_base_doc(base, history) := {
	"ref": "origin/main",
	"commit": "b0b0b0b0b0b0b0b0",
	"file": "contracts/orders.yaml",
	"status": "present",
	"error": null,
	"contract": base,
	"history": history,
}

# Base and head contracts with the same section; `fields` is head's schema.
_te_in(mode, fields) := {
	"contract": _te_contract(fields, mode),
	"base": _te_base_doc(_te_contract(_te_fields, mode), []),
}

_te_in2(base, head) := {"contract": head, "base": _te_base_doc(base, [])}

_te_set(fields, idx, patch) := json.patch(fields, [{"op": "replace", "path": sprintf("/%d", [idx]), "value": object.union(fields[idx], patch)}])

_te_drop(fields, idx) := json.patch(fields, [{"op": "remove", "path": sprintf("/%d", [idx])}])

_te_with_table(c, patch) := object.union(c, {"table": patch})

_te_rules(findings) := {f.rule | some f in findings}

_te_all_modes := ["none", "backward", "forward", "full", "backward_transitive", "forward_transitive", "full_transitive"]

# ---------------------------------------------------------------- silent cases

test_evo_unchanged_example_passes if {
	inp := object.union(lib.example_input, {"base": _te_base_doc(lib.example_contract, [])})
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_unchanged_small_contract_passes_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, _te_fields)
		denied := deny with input as inp
		warned := warn with input as inp
		count(denied) == 0
		count(warned) == 0
	}
}

# A head that breaks SW-SCHEMA-001..007, 009 and 010 against _te_fields under full_transitive.
_te_breaking_head := {
	"table": {
		"identifier": "sales.orders",
		"format_version": 2,
		"schema": [
			{"name": "order_id", "type": "int", "required": true, "id": 1},
			{"name": "buyer_id", "type": "long", "required": true, "id": 2},
			{"name": "amount", "type": "decimal(14,2)", "required": true, "id": 3},
			{"name": "channel", "type": "string", "required": true},
		],
		"partition_spec": [],
	},
	"schema_evolution": {"compatibility": "none", "allow_renames": true},
	"state": {"operators": [{"uid": "join", "kind": "keyed", "carries_table_schema": true, "schema_version": 1}]},
}

_te_breaking_base := object.union(
	_te_contract(_te_fields, "full_transitive"),
	{
		"schema_evolution": {"coordinate_with_state": true},
		"state": {"operators": [{"uid": "join", "kind": "keyed", "carries_table_schema": true, "schema_version": 1}]},
	},
)

test_evo_breaking_fixture_breaks_everything_with_a_base if {
	inp := _te_in2(_te_breaking_base, _te_breaking_head)
	denied := deny with input as inp
	warned := warn with input as inp
	_te_rules(denied) == {"SW-SCHEMA-001", "SW-SCHEMA-002", "SW-SCHEMA-003", "SW-SCHEMA-004", "SW-SCHEMA-005", "SW-SCHEMA-007", "SW-SCHEMA-010"}
	_te_rules(warned) == {"SW-SCHEMA-009"}
}

test_evo_silent_without_base if {
	inp := {"contract": _te_breaking_head, "base": null}
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_silent_when_base_key_absent if {
	inp := {"contract": _te_breaking_head}
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_silent_when_contract_added_in_this_pr if {
	inp := {"contract": _te_breaking_head, "base": {"ref": "origin/main", "commit": "b0", "file": "x.yaml", "status": "added", "error": null, "contract": null, "history": []}}
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_silent_when_base_unparseable if {
	inp := {"contract": _te_breaking_head, "base": {"ref": "origin/main", "commit": "b0", "file": "x.yaml", "status": "unparseable", "error": "bad yaml", "contract": null}}
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_silent_when_status_added_even_with_a_contract if {
	doc := object.union(_te_base_doc(_te_breaking_base, []), {"status": "added"})
	inp := {"contract": _te_breaking_head, "base": doc}
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_base_without_status_is_compared if {
	inp := {"contract": _te_breaking_head, "base": {"contract": _te_breaking_base}}
	denied := deny with input as inp
	"SW-SCHEMA-002" in _te_rules(denied)
	some f in denied
	f.rule == "SW-SCHEMA-003"
	contains(f.message, "was optional in the base and is required now")
}

test_evo_silent_when_table_identifier_changed if {
	head := object.union(_te_breaking_head, {"table": {"identifier": "sales.orders_v2"}})
	inp := _te_in2(_te_breaking_base, head)
	denied := deny with input as inp
	_te_rules(denied) == set()
}

test_evo_silent_when_base_declares_no_schema if {
	base := json.remove(_te_breaking_base, ["table/schema"])
	inp := _te_in2(base, _te_breaking_head)
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_silent_when_schemas_are_not_lists if {
	base := object.union(_te_breaking_base, {"table": {"schema": "oops"}})
	inp := _te_in2(base, _te_breaking_head)
	denied := deny with input as inp
	count(denied) == 0
	# (a head table that is not an object: checked on this file's rules only, since other
	# rules of the package read head's table as an object)
	head := object.union(_te_breaking_head, {"table": "oops"})
	inp2 := _te_in2(_te_breaking_base, head)
	not _evo_active with input as inp2
	pairs := _evo_pairs with input as inp2
	count(pairs) == 0
	widened := _evo_widened_heads with input as inp2
	count(widened) == 0
}

test_evo_non_object_fields_and_history_entries_are_ignored if {
	fields := array.concat(_te_fields, ["junk", null, 3])
	history := ["junk", {"commit": "h1"}, {"commit": "h2", "contract": "x"}, {"commit": "h3", "contract": {"table": {"schema": "no"}}}]
	inp := {"contract": _te_contract(fields, "full_transitive"), "base": _te_base_doc(_te_contract(fields, "full_transitive"), history)}
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_non_object_fields_with_coordination if {
	fields := array.concat(_te_fields, ["junk"])
	base := _te_coordinated(array.concat(["junk"], _te_fields), 1)
	inp := _te_in2(base, _te_coordinated(fields, 1))
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_history_not_a_list_is_ignored if {
	head := _te_contract(_te_drop(_te_fields, 4), "full_transitive")
	base := _te_contract(_te_fields, "full_transitive")
	inp := {"contract": head, "base": object.union(_te_base_doc(base, []), {"history": "x"})}
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-001") == {"table.schema"}
}

# ---------------------------------------------------------------- safe changes

test_evo_safe_optional_column_added_under_backward if {
	inp := _te_in("backward", array.concat(_te_fields, [{"name": "channel", "type": "string"}]))
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_safe_optional_column_added_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, array.concat(_te_fields, [{"name": "channel", "type": "string", "required": false}]))
		denied := deny with input as inp
		count(denied) == 0
	}
}

test_evo_safe_required_column_added_with_default if {
	inp := _te_in("full", array.concat(_te_fields, [{"name": "channel", "type": "string", "required": true, "default": "web"}]))
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_safe_int_to_long_under_backward if {
	inp := _te_in("backward", _te_set(_te_fields, 3, {"type": "long"}))
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_safe_promotions_under_backward_and_none if {
	fields := _te_set(_te_set(_te_fields, 3, {"type": "long"}), 2, {"type": "decimal(18,2)"})
	every mode in ["none", "backward", "backward_transitive"] {
		inp := _te_in(mode, fields)
		denied := deny with input as inp
		count(denied) == 0
	}
}

test_evo_safe_float_to_double_under_backward if {
	base := _te_contract([{"name": "ratio", "type": "float"}], "backward")
	head := _te_contract([{"name": "ratio", "type": "double"}], "backward")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_safe_doc_edit if {
	inp := _te_in("full_transitive", _te_set(_te_fields, 5, {"doc": "a better description"}))
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_safe_consumer_added if {
	c := lib.example_contract
	head := object.union(c, {"metadata": {"consumers": array.concat(c.metadata.consumers, [{"name": "ops", "contact": "#ops"}])}})
	inp := _te_in2(c, head)
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_evo_safe_reorder if {
	fields := array.concat(array.slice(_te_fields, 3, 6), array.slice(_te_fields, 0, 3))
	inp := _te_in("full_transitive", fields)
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_safe_optional_field_removed_under_forward if {
	inp := _te_in("forward", _te_drop(_te_fields, 5))
	denied := deny with input as inp
	count(denied) == 0
}

test_evo_safe_required_made_optional if {
	inp := _te_in("full", _te_set(_te_fields, 0, {"required": false}))
	denied := deny with input as inp
	count(denied) == 0
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

# Transitive: three earlier versions; order_date was required in the oldest only.
_te_history := [
	{"commit": "h1h1h1h1h1h1h1h1h1", "contract": _te_contract(_te_set(_te_fields, 4, {"required": false}), "full_transitive")},
	{"commit": "h2h2h2h2h2h2h2h2h2", "contract": _te_contract(_te_set(_te_fields, 4, {"required": false}), "full_transitive")},
	{"commit": "h3h3h3h3h3h3h3h3h3", "contract": _te_contract(_te_fields, "full_transitive")},
]

_te_in_history(mode, base_fields, head_fields, history) := {
	"contract": _te_contract(head_fields, mode),
	"base": _te_base_doc(_te_contract(base_fields, mode), history),
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

# ---------------------------------------------------------------- SW-SCHEMA-002

test_schema002_non_promotions_fire_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, _te_set(_te_fields, 0, {"type": "int"}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-002"
		f.path == "table.schema[0].type"
		f.evidence.base_type == "long"
		f.evidence.head_type == "int"
		lib.no_rule(denied, "SW-SCHEMA-010")
	}
}

test_schema002_string_binary_both_ways if {
	inp := _te_in("none", _te_set(_te_fields, 5, {"type": "binary"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[5].type"}
	base := _te_contract(_te_set(_te_fields, 5, {"type": "binary"}), "none")
	inp2 := _te_in2(base, _te_contract(_te_fields, "none"))
	denied2 := deny with input as inp2
	lib.rule_paths(denied2, "SW-SCHEMA-002") == {"table.schema[5].type"}
}

test_schema002_decimal_scale_change if {
	inp := _te_in("backward", _te_set(_te_fields, 2, {"type": "decimal(14,4)"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	contains(f.message, "same scale")
}

test_schema002_decimal_narrowing_and_equal_precision if {
	inp := _te_in("backward", _te_set(_te_fields, 2, {"type": "decimal(10,2)"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[2].type"}
}

test_schema002_decimal_to_other_type if {
	inp := _te_in("backward", _te_set(_te_fields, 2, {"type": "double"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	not contains(f.message, "same scale")
}

test_schema002_decimal_with_zero_scale_widens if {
	base := _te_contract([{"name": "n", "type": "decimal(9,0)"}], "backward")
	head := _te_contract([{"name": "n", "type": "decimal(10,0)"}], "backward")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema002_date_to_timestamp_needs_v3 if {
	inp := _te_in("none", _te_set(_te_fields, 4, {"type": "timestamp"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	f.path == "table.schema[4].type"
	contains(f.message, "format_version 3")
}

test_schema002_date_to_timestamp_on_v3_is_a_promotion if {
	every t in ["timestamp", "timestamp_ns"] {
		head := _te_with_table(_te_contract(_te_set(_te_fields, 4, {"type": t}), "backward"), {"format_version": 3})
		inp := _te_in2(_te_contract(_te_fields, "backward"), head)
		denied := deny with input as inp
		count(denied) == 0
	}
}

test_schema002_unknown_becomes_any_type_on_v3 if {
	every t in ["long", "decimal(12,2)", "struct<a:int>", "list<string>", "variant", "geometry(srid:4326)"] {
		base := _te_with_table(_te_contract([{"name": "later", "type": "unknown"}], "backward"), {"format_version": 3})
		head := _te_with_table(_te_contract([{"name": "later", "type": t}], "backward"), {"format_version": 3})
		denied := deny with input as _te_in2(base, head)
		lib.no_rule(denied, "SW-SCHEMA-002")
	}
}

test_schema002_unknown_stays_unknown_below_v3 if {
	base := _te_contract([{"name": "later", "type": "unknown"}], "none")
	head := _te_contract([{"name": "later", "type": "long"}], "none")
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as _te_in2(base, head)
}

test_schema002_decimal_precision_stops_at_38 if {
	base := _te_contract([{"name": "n", "type": "decimal(38,2)"}], "none")
	head := _te_contract([{"name": "n", "type": "decimal(39,2)"}], "none")
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as _te_in2(base, head)
}

test_schema002_geo_crs_change_is_no_promotion if {
	base := _te_with_table(_te_contract([{"name": "g", "type": "geometry(srid:4326)"}], "none"), {"format_version": 3})
	head := _te_with_table(_te_contract([{"name": "g", "type": "geometry(srid:3857)"}], "none"), {"format_version": 3})
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as _te_in2(base, head)
}

test_schema002_date_to_tz_types_never if {
	every t in ["timestamptz", "timestamptz_ns"] {
		head := _te_with_table(_te_contract(_te_set(_te_fields, 4, {"type": t}), "backward"), {"format_version": 3})
		inp := _te_in2(_te_contract(_te_fields, "backward"), head)
		denied := deny with input as inp
		lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[4].type"}
	}
}

test_schema002_nested_types_compare_as_strings if {
	base := _te_contract([{"name": "tags", "type": "list<int>"}, {"name": "m", "type": "map<string,long>"}], "none")
	same := _te_in2(base, base)
	denied_same := deny with input as same
	count(denied_same) == 0
	head := _te_contract([{"name": "tags", "type": "list<long>"}, {"name": "m", "type": "map<string,long>"}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[0].type"}
}

test_schema002_reverse_promotion if {
	base := _te_contract([{"name": "ratio", "type": "double"}], "none")
	head := _te_contract([{"name": "ratio", "type": "float"}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[0].type"}
}

test_schema002_type_change_of_renamed_field if {
	inp := _te_in("none", _te_set(_te_fields, 0, {"name": "id", "type": "string"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[0].type"}
	lib.rule_paths(denied, "SW-SCHEMA-005") == {"table.schema[0].name"}
}

# ---------------------------------------------------------------- SW-SCHEMA-003

test_schema003_optional_made_required_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, _te_set(_te_fields, 2, {"required": true}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-003"
		f.path == "table.schema[2].required"
		f.evidence.base_required == null
	}
}

test_schema003_explicit_false_made_required if {
	base := _te_contract(_te_set(_te_fields, 5, {"required": false}), "none")
	inp := _te_in2(base, _te_contract(_te_set(_te_fields, 5, {"required": true}), "none"))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-003"
	f.evidence.base_required == false
}

test_schema003_required_stays_required_passes if {
	inp := _te_in("none", _te_fields)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-003")
}

# ---------------------------------------------------------------- SW-SCHEMA-004

test_schema004_required_added_without_default_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, array.concat(_te_fields, [{"name": "channel", "type": "string", "required": true}]))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-004"
		f.path == "table.schema[6].default"
		f.value == "channel"
	}
}

test_schema004_renamed_from_unknown_field_is_an_addition if {
	field := {"name": "channel", "type": "string", "required": true, "renamed_from": "medium"}
	inp := _te_in("none", array.concat(_te_fields, [field]))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-004") == {"table.schema[6].default"}
}

test_schema004_falsy_default_counts_as_a_default if {
	fields := array.concat(_te_fields, [{"name": "flag", "type": "boolean", "required": true, "default": false}, {"name": "n", "type": "int", "required": true, "default": 0}])
	inp := _te_in("none", fields)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-004")
}

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

# ---------------------------------------------------------------- SW-SCHEMA-006

_te_v3(fields, spec) := _te_with_table(_te_contract(fields, "backward"), {"format_version": 3, "partition_spec": spec})

test_schema006_date_to_timestamp_under_identity_bucket_truncate if {
	spec := [
		{"source": "order_date", "transform": "identity"},
		{"source": "order_date", "transform": "bucket[16]"},
		{"source": "order_date", "transform": "truncate[4]"},
		{"source": "order_date", "transform": "day"},
	]
	head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp"}), spec)
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-006"
	f.path == "table.schema[4].type"
	f.evidence.partitions == ["table.partition_spec[0] (identity)", "table.partition_spec[1] (bucket[16])", "table.partition_spec[2] (truncate[4])"]
	lib.no_rule(denied, "SW-SCHEMA-002")
}

test_schema006_time_transforms_and_void_keep_values if {
	every t in ["year", "month", "day", "hour", "void"] {
		head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp_ns"}), [{"source": "order_date", "transform": t}])
		inp := _te_in2(_te_contract(_te_fields, "backward"), head)
		denied := deny with input as inp
		count(denied) == 0
	}
}

test_schema006_numeric_promotions_keep_values if {
	spec := [
		{"source": "quantity", "transform": "identity"},
		{"source": "quantity", "transform": "bucket[8]"},
		{"source": "amount", "transform": "truncate[10]"},
	]
	head := _te_v3(_te_set(_te_set(_te_fields, 3, {"type": "long"}), 2, {"type": "decimal(20,2)"}), spec)
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema006_other_columns_partitioned_pass if {
	head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp"}), [{"source": "quantity", "transform": "identity"}, "junk"])
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema006_partition_spec_not_a_list if {
	head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp"}), "oops")
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	count(denied) == 0
}

# ---------------------------------------------------------------- SW-SCHEMA-007

_te_ops(version) := {"operators": [
	{"uid": "orders-dedup", "kind": "keyed", "schema_version": 3, "carries_table_schema": false},
	{"uid": "orders-enrich-join", "kind": "keyed", "schema_version": version, "carries_table_schema": true},
]}

_te_coordinated(fields, version) := object.union(
	_te_contract(fields, "backward"),
	{"schema_evolution": {"coordinate_with_state": true}, "state": _te_ops(version)},
)

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

# ---------------------------------------------------------------- SW-SCHEMA-009

_te_modes_in(base_mode, head_mode) := _te_in2(_te_contract(_te_fields, base_mode), _te_contract(_te_fields, head_mode))

test_schema009_weakenings if {
	cases := [
		["full", "backward", ["a weaker mode"]],
		["full", "forward", ["a weaker mode"]],
		["full", "none", ["a weaker mode"]],
		["backward", "none", ["a weaker mode"]],
		["forward_transitive", "none", ["a weaker mode", "no longer transitive: only the base version would be checked"]],
		["full_transitive", "full", ["no longer transitive: only the base version would be checked"]],
		["backward_transitive", "backward", ["no longer transitive: only the base version would be checked"]],
		["backward_transitive", "full", ["no longer transitive: only the base version would be checked"]],
		["full_transitive", "backward_transitive", ["a weaker mode"]],
		["backward", "forward", ["a change of direction: the side that upgrades last loses its protection"]],
		["forward_transitive", "backward_transitive", ["a change of direction: the side that upgrades last loses its protection"]],
	]
	every c in cases {
		[b, h, reasons] := c
		inp := _te_modes_in(b, h)
		warned := warn with input as inp
		some f in warned
		f.rule == "SW-SCHEMA-009"
		f.path == "schema_evolution.compatibility"
		f.value == h
		f.evidence == {"base": b, "head": h, "reasons": reasons}
	}
}

test_schema009_strengthening_and_same_pass if {
	cases := [
		["none", "backward"], ["backward", "full"], ["forward", "forward_transitive"],
		["full", "full_transitive"], ["backward", "backward"], ["none", "none"],
		["backward_transitive", "full_transitive"],
	]
	every c in cases {
		[b, h] := c
		inp := _te_modes_in(b, h)
		warned := warn with input as inp
		lib.no_rule(warned, "SW-SCHEMA-009")
	}
}

test_schema009_section_removed_is_the_default_backward if {
	head := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution"])
	inp := _te_in2(_te_contract(_te_fields, "full"), head)
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-SCHEMA-009"
	f.evidence == {"base": "full", "head": "backward", "reasons": ["a weaker mode"]}
	# and from backward, removing the section changes nothing
	inp2 := _te_in2(_te_contract(_te_fields, "backward"), head)
	warned2 := warn with input as inp2
	count(warned2) == 0
}

test_schema009_section_added_passes if {
	base := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution"])
	inp := _te_in2(base, _te_contract(_te_fields, "full"))
	warned := warn with input as inp
	count(warned) == 0
}

test_schema009_weird_values_read_as_the_default if {
	# (validation refuses them; a document built by hand may hold them)
	base := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"compatibility": 3}})
	inp := _te_in2(base, _te_contract(_te_fields, "backward"))
	warned := warn with input as inp
	count(warned) == 0
	base2 := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": "x"})
	inp2 := _te_in2(base2, _te_contract(_te_fields, "backward"))
	warned2 := warn with input as inp2
	count(warned2) == 0
	head3 := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": "x"})
	inp3 := _te_in2(_te_contract(_te_fields, "full"), head3)
	warned3 := warn with input as inp3
	some f in warned3
	f.evidence.head == "backward"
}

test_schema009_unknown_head_mode_is_not_judged if {
	inp := _te_modes_in("full_transitive", "sideways")
	warned := warn with input as inp
	count(warned) == 0
}

test_schema009_allow_renames_turned_on if {
	base := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution/allow_renames"])
	head := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"allow_renames": true}})
	inp := _te_in2(base, head)
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-SCHEMA-009"
	f.path == "schema_evolution.allow_renames"
	f.evidence == {"base": null, "head": true}
	contains(f.message, "from absent (false)")
}

test_schema009_coordinate_with_state_turned_off if {
	base := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"coordinate_with_state": true}})
	every head in [_te_contract(_te_fields, "full"), json.remove(_te_contract(_te_fields, "full"), ["schema_evolution/coordinate_with_state"])] {
		inp := _te_in2(base, head)
		warned := warn with input as inp
		some f in warned
		f.rule == "SW-SCHEMA-009"
		f.path == "schema_evolution.coordinate_with_state"
	}
}

test_schema009_fires_without_table_schema if {
	base := {"schema_evolution": {"compatibility": "full"}}
	inp := _te_in2(base, {"schema_evolution": {"compatibility": "backward"}})
	warned := warn with input as inp
	lib.rule_paths(warned, "SW-SCHEMA-009") == {"schema_evolution.compatibility"}
}

# ---------------------------------------------------------------- SW-SCHEMA-010

test_schema010_promotion_under_forward_modes if {
	every mode in ["forward", "full", "forward_transitive", "full_transitive"] {
		inp := _te_in(mode, _te_set(_te_fields, 3, {"type": "long"}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-010"
		f.path == "table.schema[3].type"
		f.evidence.old_type == "int"
		f.evidence.head_type == "long"
		f.evidence.commit == "b0b0b0b0b0b0b0b0"
		lib.no_rule(denied, "SW-SCHEMA-002")
	}
}

test_schema010_decimal_widening_under_full if {
	inp := _te_in("full", _te_set(_te_fields, 2, {"type": "decimal(18,2)"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-010") == {"table.schema[2].type"}
}

test_schema010_not_under_backward_or_none if {
	every mode in ["none", "backward", "backward_transitive"] {
		inp := _te_in(mode, _te_set(_te_fields, 3, {"type": "long"}))
		denied := deny with input as inp
		lib.no_rule(denied, "SW-SCHEMA-010")
	}
}

# history: quantity was int in h2 and h3, long in h1 and at base; head long.
_te_history_types := [
	{"commit": "h1h1h1h1h1h1h1h1h1", "contract": _te_contract(_te_set(_te_fields, 3, {"type": "long"}), "full_transitive")},
	{"commit": "h2h2h2h2h2h2h2h2h2", "contract": _te_contract(_te_fields, "full_transitive")},
	{"commit": "h3h3h3h3h3h3h3h3h3", "contract": _te_contract(_te_set(_te_fields, 3, {"type": "string"}), "full_transitive")},
]

test_schema010_transitive_checks_every_earlier_version if {
	fields := _te_set(_te_fields, 3, {"type": "long"})
	every mode in ["forward_transitive", "full_transitive"] {
		inp := _te_in_history(mode, fields, fields, _te_history_types)
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-010"
		f.path == "table.schema[3].type"
		f.evidence.commit == "h2h2h2h2h2h2h2h2h2"
		f.evidence.old_type == "int"
		f.evidence.versions_differing == 2
		count(lib.rule_paths(denied, "SW-SCHEMA-010")) == 1
	}
}

test_schema010_transitive_non_promotion_in_history_fires if {
	fields := _te_set(_te_fields, 3, {"type": "long"})
	history := [_te_history_types[2]]
	inp := _te_in_history("forward_transitive", fields, fields, history)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-010"
	f.evidence.old_type == "string"
}

test_schema010_non_transitive_ignores_history if {
	fields := _te_set(_te_fields, 3, {"type": "long"})
	inp := _te_in_history("full", fields, fields, _te_history_types)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema010_not_with_002_on_the_same_field if {
	# base long -> head int is a non-promotion (002); history int must not add 010.
	history := [{"commit": "h1", "contract": _te_contract(_te_fields, "full_transitive")}]
	base := _te_set(_te_fields, 3, {"type": "long"})
	inp := _te_in_history("full_transitive", base, _te_set(_te_fields, 3, {"type": "string"}), history)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[3].type"}
	lib.no_rule(denied, "SW-SCHEMA-010")
}

test_schema010_with_006_on_v3 if {
	base := _te_contract(_te_fields, "forward")
	head := _te_with_table(_te_contract(_te_set(_te_fields, 4, {"type": "timestamp"}), "forward"), {"format_version": 3, "partition_spec": [{"source": "order_date", "transform": "identity"}]})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	_te_rules(denied) == {"SW-SCHEMA-006", "SW-SCHEMA-010"}
}

test_schema002_date_to_timestamp_without_format_version if {
	head := json.remove(_te_contract(_te_set(_te_fields, 4, {"type": "timestamp"}), "none"), ["table/format_version"])
	inp := _te_in2(_te_contract(_te_fields, "none"), head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	f.evidence.format_version == 0
}

test_schema009_protect_consumers_turned_off if {
	base := _te_contract(_te_fields, "full")
	head := object.union(base, {"schema_evolution": {"protect_consumers": false}})
	inp := _te_in2(base, head)
	warned := warn with input as inp
	[f] := [x | some x in warned; x.path == "schema_evolution.protect_consumers"]
	f.rule == "SW-SCHEMA-009"
	f.evidence == {"base": null, "head": false}
	contains(f.message, "goes from absent (true) in the base (origin/main) to false")
	# from an explicit true too; false to false, false to true and absent to true say nothing
	inp2 := _te_in2(object.union(base, {"schema_evolution": {"protect_consumers": true}}), head)
	lib.rule_paths(warn, "SW-SCHEMA-009") == {"schema_evolution.protect_consumers"} with input as inp2
	inp3 := _te_in2(head, head)
	lib.no_rule(warn, "SW-SCHEMA-009") with input as inp3
	inp4 := _te_in2(head, base)
	lib.no_rule(warn, "SW-SCHEMA-009") with input as inp4
	inp5 := _te_in2(base, object.union(base, {"schema_evolution": {"protect_consumers": true}}))
	lib.no_rule(warn, "SW-SCHEMA-009") with input as inp5
}

# ---------------------------------------------------------------- SW-SCHEMA-012

_te_consumers := [{"name": "finance-dashboard", "contact": "#fin"}, {"name": "fraud-features"}]

# c with declared consumers.
_te_consumed(c) := object.union(c, {"metadata": {"name": "orders", "consumers": _te_consumers}})

_te_012(findings) := [f | some f in findings; f.rule == "SW-SCHEMA-012"]

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
	_te_rules(denied) == {"SW-SCHEMA-012"}
}

test_schema012_a_required_removal_under_forward_is_schema001_alone if {
	# order_date is required: under forward and full SW-SCHEMA-001 reports it, under backward and none SW-SCHEMA-012
	every mode in _te_all_modes {
		base := _te_consumed(_te_contract(_te_fields, mode))
		head := _te_consumed(_te_contract(_te_drop(_te_fields, 4), mode))
		inp := _te_in2(base, head)
		denied := deny with input as inp
		forward := mode in {"forward", "full", "forward_transitive", "full_transitive"}
		_te_rules(denied) == {true: {"SW-SCHEMA-001"}, false: {"SW-SCHEMA-012"}}[forward]
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

test_schema012_widening_adding_and_optional_to_required_are_not_its_concern if {
	base := _te_consumed(_te_contract(_te_fields, "backward"))
	added := array.concat(_te_fields, [{"name": "channel", "type": "string"}])
	widened := _te_set(_te_fields, 3, {"type": "long"})
	narrowed := _te_set(_te_fields, 0, {"type": "int"})
	made_required := _te_set(_te_fields, 2, {"required": true})
	every fields in [added, widened, narrowed, made_required] {
		inp := _te_in2(base, _te_consumed(_te_contract(fields, "backward")))
		count(_te_012(deny)) == 0 with input as inp
	}
	# a narrowed type is SW-SCHEMA-002's, a field made required SW-SCHEMA-003's
	inp2 := _te_in2(base, _te_consumed(_te_contract(narrowed, "backward")))
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as inp2
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

test_schema012_the_base_decides_consumers_and_protection if {
	head_fields := _te_drop(_te_fields, 5)
	# the pull request drops the consumers with the column: the base's consumers still read it
	inp := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), _te_contract(head_fields, "backward"))
	count(_te_012(deny)) == 1 with input as inp
	# consumers only the pull request adds are not protected yet
	inp2 := _te_in2(_te_contract(_te_fields, "backward"), _te_consumed(_te_contract(head_fields, "backward")))
	count(_te_012(deny)) == 0 with input as inp2
	# protection off at the base: nothing, whatever head says
	off := {"schema_evolution": {"protect_consumers": false}}
	base_off := object.union(_te_consumed(_te_contract(_te_fields, "backward")), off)
	inp3 := _te_in2(base_off, _te_consumed(_te_contract(head_fields, "backward")))
	count(_te_012(deny)) == 0 with input as inp3
	# turned off by the pull request itself: still protected (and SW-SCHEMA-009 warns)
	inp4 := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), object.union(_te_consumed(_te_contract(head_fields, "backward")), off))
	count(_te_012(deny)) == 1 with input as inp4
	lib.rule_paths(warn, "SW-SCHEMA-009") == {"schema_evolution.protect_consumers"} with input as inp4
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
