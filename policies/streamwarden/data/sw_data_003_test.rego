package streamwarden.data

import rego.v1

import data.streamwarden.lib

test_data003_no_nulls_pass if {
	inp := _t_input({"not_null": ["event_time", "customer_id"]}, _t_data({"not_null": _t_nulls(0, 0)}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-003")
}

test_data003_nulls_in_quality_column_fire_at_its_index if {
	inp := _t_input({"not_null": ["event_time", "customer_id"]}, _t_data({"not_null": _t_nulls(12, 0)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-003") == {"quality.not_null[1]"}
	some f in findings
	contains(f.message, "holds 12 null(s)")
	contains(f.message, "declared in quality.not_null and required in table.schema")
	f.value == "customer_id"
}

test_data003_nulls_in_required_field_fire_at_schema if {
	inp := _t_input({"not_null": ["customer_id"]}, _t_data({"not_null": _t_nulls(0, 1)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-003") == {"table.schema[0].required"}
}

test_data003_one_finding_per_column if {
	inp := _t_input({"not_null": ["customer_id"]}, _t_data({"not_null": _t_nulls(1, 1)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-003") == {"quality.not_null[0]", "table.schema[0].required"}
}

test_data003_column_declared_nowhere_points_at_quality_not_null if {
	facts := {"legacy_id": {"field_id": 9, "missing": false, "nulls": 1, "declared_in": []}}
	inp := _t_input({}, _t_data({"not_null": facts}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-003") == {"quality.not_null"}
}

test_data003_missing_quality_column_fires if {
	facts := {"region": {"field_id": null, "missing": true, "nulls": null, "declared_in": ["quality.not_null"]}}
	inp := _t_input({"not_null": ["region"]}, _t_data({"not_null": facts}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-003"
	f.path == "quality.not_null[0]"
	contains(f.message, "does not have")
}

test_data003_missing_required_only_field_is_left_to_table_rules if {
	facts := {"order_id": {"field_id": null, "missing": true, "nulls": null, "declared_in": ["table.schema"]}}
	inp := _t_input({}, _t_data({"not_null": facts}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-003")
}

test_data003_silent_when_unavailable if {
	inp := _t_input({"not_null": ["customer_id"]}, {"available": false, "configured": true, "not_null": _t_nulls(5, 5)})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-003")
}
