package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-004

test_table004_upsert_without_identifier_fields if {
	inp := lib.contract_without(["table/identifier_fields"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-004"
	f.path == "table.identifier_fields"
	f.evidence == {"write.upsert.enabled": "true", "identifier_fields": null}
}

test_table004_suggests_a_required_primitive_column_of_the_contract if {
	inp := lib.contract_with({"table": {
		"identifier_fields": [],
		"schema": [
			{"name": "amount", "type": "double", "required": true},
			{"name": "note", "type": "string"},
			{"name": "tags", "type": "list<string>", "required": true},
			{"name": "invoice_id", "type": "long", "required": true},
		],
	}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-004"
	endswith(f.message, "identify a row (for example [invoice_id])")
}

test_table004_suggests_nothing_without_a_candidate if {
	inp := {"contract": {"table": {"properties": {"write.upsert.enabled": "true"}, "schema": [{"name": "x", "type": "double", "required": true}]}}}
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-004"
	endswith(f.message, "required primitive columns of table.schema that identify a row")
}

test_table004_upsert_with_empty_identifier_fields if {
	inp := lib.contract_with({"table": {"identifier_fields": []}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-004") == {"table.identifier_fields"}
}

test_table004_upsert_written_in_capitals_or_as_boolean if {
	findings_upper := deny with input as {"contract": {"table": {"properties": {"write.upsert.enabled": "TRUE"}}}}
	lib.rule_paths(findings_upper, "SW-TABLE-004") == {"table.identifier_fields"}
	findings_bool := deny with input as {"contract": {"table": {"properties": {"write.upsert.enabled": true}}}}
	lib.rule_paths(findings_bool, "SW-TABLE-004") == {"table.identifier_fields"}
}

test_table004_upsert_disabled_passes if {
	findings := deny with input as {"contract": {"table": {"properties": {"write.upsert.enabled": "false"}}}}
	lib.no_rule(findings, "SW-TABLE-004")
}

test_table004_no_properties_passes if {
	findings := deny with input as {"contract": {"table": {"identifier": "sales.orders"}}}
	lib.no_rule(findings, "SW-TABLE-004")
}
