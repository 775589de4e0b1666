package streamwarden.data

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-DATA-001

test_data001_lag_equal_to_max_lag_passes if {
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": _t_fresh(_t_now - 900000)}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-001")
}

test_data001_one_ms_over_fires if {
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": _t_fresh(_t_now - 900001)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-001") == {"quality.freshness.max_lag"}
	some f in findings
	f.evidence.lag_ms == 900001
	f.source == "data"
}

test_data001_message_names_lag_and_promise if {
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": _t_fresh(_t_now - 2820000)}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-001"
	contains(f.message, "47m before now")
	contains(f.message, "quality.freshness.max_lag (15m)")
	contains(f.message, "sales.orders (catalog lake)")
}

test_data001_future_rows_pass if {
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": _t_fresh(_t_now + 60000)}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-001")
}

test_data001_no_value_fires if {
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": _t_fresh(null)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-001") == {"quality.freshness.column"}
}

test_data001_missing_column_fires if {
	fact := {"column": "event_time", "field_id": null, "type": null, "missing": true}
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-001"
	f.path == "quality.freshness.column"
	contains(f.message, "does not exist in the live table schema")
}

test_data001_unusable_type_fires if {
	fact := {"column": "event_time", "field_id": 3, "type": "string", "missing": false, "error": "column event_time is string"}
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-001"
	contains(f.message, "cannot be measured")
}

test_data001_other_column_in_facts_is_ignored if {
	fact := object.union(_t_fresh(0), {"column": "ingest_time"})
	inp := _t_input(_t_quality_fresh, _t_data({"freshness": fact}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-001")
}

test_data001_silent_without_available_facts if {
	stale := _t_fresh(0)
	inp1 := _t_input(_t_quality_fresh, {"available": false, "configured": true, "error": "Java is not installed", "freshness": stale})
	findings1 := deny with input as inp1
	lib.no_rule(findings1, "SW-DATA-001")
	inp2 := _t_input(_t_quality_fresh, {"available": false, "configured": false})
	findings2 := deny with input as inp2
	lib.no_rule(findings2, "SW-DATA-001")
	inp3 := {"contract": {"quality": _t_quality_fresh}, "facts": {}, "now_ms": _t_now}
	findings3 := deny with input as inp3
	lib.no_rule(findings3, "SW-DATA-001")
}

test_data001_silent_without_promise if {
	inp := _t_input({}, _t_data({"freshness": _t_fresh(0)}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-001")
}
