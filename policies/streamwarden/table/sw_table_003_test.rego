package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-003

test_table003_format_below_contract if {
	inp := ice_input2({"table": {"format_version": 3}}, {})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-003")
	f.path == "table.format_version"
	f.evidence == {"contract": 3, "live": 2}
}

test_table003_upsert_on_v1 if {
	inp := ice_input2({"table": {"format_version": 1}}, {"format_version": 1})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-003")
	f.value == "upsert-on-v1"
	contains(f.message, "format v1")
}

test_table003_v1_without_upsert_passes if {
	inp := ice_input2({"table": {"format_version": 1, "properties": {"write.upsert.enabled": "false"}}}, {"format_version": 1, "properties": {"write.upsert.enabled": "false"}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-003")
}

test_table003_newer_table_passes if {
	inp := ice_input({"format_version": 3})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-003")
}
