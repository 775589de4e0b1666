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
	lib.rule_ids(denied) == {"SW-SCHEMA-001", "SW-SCHEMA-002", "SW-SCHEMA-003", "SW-SCHEMA-004", "SW-SCHEMA-005", "SW-SCHEMA-007", "SW-SCHEMA-010"}
	lib.rule_ids(warned) == {"SW-SCHEMA-009"}
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
	"SW-SCHEMA-002" in lib.rule_ids(denied)
	some f in denied
	f.rule == "SW-SCHEMA-003"
	contains(f.message, "was optional in the base and is required now")
}

test_evo_silent_when_table_identifier_changed if {
	head := object.union(_te_breaking_head, {"table": {"identifier": "sales.orders_v2"}})
	inp := _te_in2(_te_breaking_base, head)
	denied := deny with input as inp
	lib.rule_ids(denied) == set()
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

# ---------------------------------------------------------------- SW-SCHEMA-006

_te_v3(fields, spec) := _te_with_table(_te_contract(fields, "backward"), {"format_version": 3, "partition_spec": spec})

# ---------------------------------------------------------------- SW-SCHEMA-007

_te_ops(version) := {"operators": [
	{"uid": "orders-dedup", "kind": "keyed", "schema_version": 3, "carries_table_schema": false},
	{"uid": "orders-enrich-join", "kind": "keyed", "schema_version": version, "carries_table_schema": true},
]}

_te_coordinated(fields, version) := object.union(
	_te_contract(fields, "backward"),
	{"schema_evolution": {"coordinate_with_state": true}, "state": _te_ops(version)},
)

# ---------------------------------------------------------------- SW-SCHEMA-009

_te_modes_in(base_mode, head_mode) := _te_in2(_te_contract(_te_fields, base_mode), _te_contract(_te_fields, head_mode))

# history: quantity was int in h2 and h3, long in h1 and at base; head long.
_te_history_types := [
	{"commit": "h1h1h1h1h1h1h1h1h1", "contract": _te_contract(_te_set(_te_fields, 3, {"type": "long"}), "full_transitive")},
	{"commit": "h2h2h2h2h2h2h2h2h2", "contract": _te_contract(_te_fields, "full_transitive")},
	{"commit": "h3h3h3h3h3h3h3h3h3", "contract": _te_contract(_te_set(_te_fields, 3, {"type": "string"}), "full_transitive")},
]

# ---------------------------------------------------------------- SW-SCHEMA-012

_te_consumers := [{"name": "finance-dashboard", "contact": "#fin"}, {"name": "fraud-features"}]

# c with declared consumers.
_te_consumed(c) := object.union(c, {"metadata": {"name": "orders", "consumers": _te_consumers}})

_te_012(findings) := [f | some f in findings; f.rule == "SW-SCHEMA-012"]
