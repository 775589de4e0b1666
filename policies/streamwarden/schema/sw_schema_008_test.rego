package streamwarden.schema

import rego.v1

import data.streamwarden.lib
import data.streamwarden.table

# The example contract's schema without `currency` (id 4) is exactly the table's schema 0.
_t_old_fields := [f | some f in lib.example_contract.table.schema; f.id != 4]

_t_contract(fields) := object.union(lib.example_contract, {"table": {"schema": fields}})

_t_schema008(findings) := [f | some f in findings; f.rule == "SW-SCHEMA-008"]

test_schema008_clean_table_passes if {
	inp := table.ice_input({})
	findings := deny with input as inp
	count(_t_schema008(findings)) == 0
}

test_schema008_live_schema_ahead_of_contract if {
	contract := _t_contract(_t_old_fields)
	inp := object.union(table.ice_input({}), {"contract": contract})
	findings := deny with input as inp
	[f] := _t_schema008(findings)
	f.path == "table.schema"
	f.source == "iceberg"
	f.value == "0->1"
	f.evidence == {"live_schema_id": 1, "contract_schema_id": 0, "added": ["currency"], "removed": [], "changed": []}
	contains(f.message, "at schema id 1 but table.schema describes its older schema id 0")
}

# The live table promoted amount after schema 0 (package-level rules, not function arguments:
# regorus 0.13 mis-evaluates a `with` input built by another package's function from rule values).
_t_promoted_fields := array.concat(
	[f | some f in table.ice_fields; f.id != 3],
	[object.union(f, {"type": "decimal(14,2)"}) | some f in table.ice_fields; f.id == 3],
)

_t_promoted_input := object.union(
	table.ice_input({}),
	{
		"contract": _t_contract(_t_old_fields),
		"facts": {"iceberg": {"schema": {"schema_id": 1, "fields": _t_promoted_fields}}},
	},
)

_t_current_only_input := object.union(table.ice_input({}), {"facts": {"iceberg": {"schemas": [table.ice_clean_facts.schema]}}})

test_schema008_reports_changed_fields if {
	# the contract still describes schema 0
	inp := _t_promoted_input
	findings := deny with input as inp
	[f] := _t_schema008(findings)
	f.evidence.added == ["currency"]
	f.evidence.changed == ["amount"]
}

test_schema008_silent_when_contract_matches_no_schema if {
	# a contract that never matched the table is SW-TABLE-001's
	fields := array.concat(_t_old_fields, [{"name": "discount", "type": "double", "id": 9}])
	inp := object.union(table.ice_input({}), {"contract": _t_contract(fields)})
	findings := deny with input as inp
	count(_t_schema008(findings)) == 0
}

test_schema008_silent_when_the_matching_schema_is_current if {
	# the table went back to an equal schema: its id is the current one
	inp := _t_current_only_input
	findings := deny with input as inp
	count(_t_schema008(findings)) == 0
}

test_schema008_silent_without_facts if {
	inp := object.union(lib.example_input, {"contract": _t_contract(_t_old_fields)})
	findings := deny with input as inp
	count(_t_schema008(findings)) == 0
}
