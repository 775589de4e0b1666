package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-004 (live body)

test_table004_live_identifier_fields_differ if {
	inp := ice_input({"schema": object.union(_ice_schema_1, {"identifier_field_ids": [2], "identifier_fields": ["customer_id"]})})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-004")
	f.source == "iceberg"
	f.evidence == {"contract": ["order_id"], "live": ["customer_id"]}
}

test_table004_live_without_identifier_fields if {
	inp := ice_input({"schema": object.union(_ice_schema_1, {"identifier_field_ids": [], "identifier_fields": []})})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-004") == {"table.identifier_fields"}
}

test_table004_live_upsert_without_ids_when_contract_declares_none if {
	facts := {"schema": object.union(_ice_schema_1, {"identifier_field_ids": [], "identifier_fields": []})}
	inp := json.remove(ice_input(facts), ["contract/table/identifier_fields", "contract/table/properties"])
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-004")
	f.value == "live-upsert-without-identifier"
}

test_table004_an_empty_list_declares_none_and_the_live_fields_are_not_compared if {
	inp := _t004_none({})
	inp.contract.table.identifier_fields == []
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-004")
}

test_table004_an_empty_list_with_a_live_upsert_table_without_ids if {
	inp := _t004_none({"schema": object.union(_ice_schema_1, {"identifier_field_ids": [], "identifier_fields": []})})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-004")
	f.value == "live-upsert-without-identifier"
}

test_table004_same_fields_in_another_order_pass if {
	inp := ice_input2({"table": {"identifier_fields": ["order_id", "customer_id"]}}, {"schema": object.union(_ice_schema_1, {"identifier_field_ids": [2, 1], "identifier_fields": ["customer_id", "order_id"]})})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-004")
}
