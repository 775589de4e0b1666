package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-001

test_table001_type_differs if {
	fields := [object.union(f, {"type": "decimal(14,2)"}) | some f in ice_fields; f.id == 3]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 3], fields)))
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-001")
	f.path == "table.schema[2].type"
	f.source == "iceberg"
	f.evidence.contract == "decimal(12,2)"
	f.evidence.live == "decimal(14,2)"
	contains(f.message, `has type "decimal(14,2)", the contract "decimal(12,2)"`)
}

test_table001_required_differs if {
	fields := [object.union(f, {"required": false}) | some f in ice_fields; f.id == 2]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 2], fields)))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[1].required"}
}

test_table001_missing_and_extra_fields if {
	extra := {"id": 6, "name": "discount", "type": "double", "required": false}
	live := array.concat([f | some f in ice_fields; f.id != 4], [extra])
	inp := ice_input(_t_live_fields(live))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[3]", "table.schema"}
	some f in findings
	f.path == "table.schema"
	f.value == "discount"
	contains(f.message, "has field discount (id 6, optional double) that table.schema does not declare")
}

test_table001_rename_by_id if {
	renamed := [object.union(f, {"name": "total"}) | some f in ice_fields; f.id == 3]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 3], renamed)))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[2].name"}
}

test_table001_field_matched_by_name_with_another_id if {
	moved := [object.union(f, {"id": 9}) | some f in ice_fields; f.id == 4]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 4], moved)))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[3].id"}
}

test_table001_contract_without_ids_matches_by_name if {
	cfields := [json.remove(f, ["id"]) | some f in lib.example_contract.table.schema]
	inp := ice_input2({"table": {"schema": cfields}}, {})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-001")
}

test_table001_silent_when_contract_matches_an_older_schema if {
	# the table evolved out of band to schema 1; SW-SCHEMA-008 reports it, not SW-TABLE-001
	cfields := [f | some f in lib.example_contract.table.schema; f.id != 4]
	inp := ice_input2({"table": {"schema": cfields}}, {})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-001")
}

test_table001_silent_without_contract_schema if {
	inp := json.remove(ice_input({}), ["contract/table/schema"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-001")
}
