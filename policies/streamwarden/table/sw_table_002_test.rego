package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-002

test_table002_other_transform if {
	inp := ice_input({"partition_spec": {"spec_id": 1, "fields": [{"source": "event_time", "source_id": 5, "transform": "hour", "name": "h", "field_id": 1001}]}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-002") == {"table.partition_spec[0]", "table.partition_spec"}
	some f in findings
	f.path == "table.partition_spec[0]"
	contains(f.message, "partition field day(event_time) is declared but not in the live partition spec")
	contains(f.message, "spec id 1: hour(event_time)")
}

test_table002_unpartitioned_table if {
	inp := ice_input({"partition_spec": {"spec_id": 0, "fields": []}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-002") == {"table.partition_spec[0]"}
}

test_table002_extra_live_field if {
	extra := {"source": "customer_id", "source_id": 2, "transform": "bucket[16]", "name": "b", "field_id": 1001}
	inp := ice_input({"partition_spec": {"spec_id": 2, "fields": array.concat(ice_clean_facts.partition_spec.fields, [extra])}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-002")
	f.path == "table.partition_spec"
	f.value == "customer_id:bucket[16]"
}

test_table002_order_differs if {
	two := [{"source": "event_time", "transform": "day"}, {"source": "customer_id", "transform": "bucket[16]"}]
	live := [
		{"source": "customer_id", "source_id": 2, "transform": "bucket[16]", "name": "b", "field_id": 1001},
		{"source": "event_time", "source_id": 5, "transform": "day", "name": "d", "field_id": 1000},
	]
	inp := ice_input2({"table": {"partition_spec": two}}, {"partition_spec": {"spec_id": 3, "fields": live}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-002")
	f.value == "order"
}

test_table002_void_fields_are_removed_fields if {
	void := {"source": "customer_id", "source_id": 2, "transform": "void", "name": "b", "field_id": 1001}
	inp := ice_input({"partition_spec": {"spec_id": 2, "fields": array.concat(ice_clean_facts.partition_spec.fields, [void])}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-002")
}

test_table002_silent_without_contract_spec if {
	inp := json.remove(ice_input({"partition_spec": {"spec_id": 0, "fields": []}}), ["contract/table/partition_spec"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-002")
}
