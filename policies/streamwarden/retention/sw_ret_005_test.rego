package streamwarden.retention

import rego.v1

import data.streamwarden.lib

_t_rd_now := 1795608000000 # 2026-11-25T12:00:00Z

_t_rd_day := 86400000

_t_rd_spec := {"column": "event_time", "max_age": 400 * _t_rd_day}

_t_rd_fact(min_ms, expired) := {
	"column": "event_time", "field_id": 3, "type": "timestamptz", "missing": false,
	"min_ms": min_ms, "min": "2024-01-01T00:00:00.000Z", "cutoff_ms": _t_rd_now - (400 * _t_rd_day),
	"cutoff": "2025-10-21T12:00:00.000Z", "expired_rows": expired, "source": "scan",
}

_t_rd_input(spec, fact) := {
	"contract": {"retention": {"data": spec}},
	"facts": {"data": {"available": true, "configured": true, "catalog": "lake", "table": "sales.orders",
		"snapshot_id": 1, "scan": {"mode": "full"}, "retention": fact}},
	"now_ms": _t_rd_now,
}

# ---------------------------------------------------------------- SW-RET-005

test_ret005_row_exactly_max_age_old_passes if {
	inp := _t_rd_input(_t_rd_spec, _t_rd_fact(_t_rd_now - (400 * _t_rd_day), 0))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-005")
}

test_ret005_one_ms_older_fires if {
	inp := _t_rd_input(_t_rd_spec, _t_rd_fact((_t_rd_now - (400 * _t_rd_day)) - 1, 1))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-005") == {"retention.data.max_age"}
	some f in findings
	f.rule == "SW-RET-005"
	f.source == "data"
	f.evidence.expired_rows == 1
	f.evidence.cutoff_ms == _t_rd_now - (400 * _t_rd_day)
}

test_ret005_message_names_oldest_cutoff_and_count if {
	inp := _t_rd_input(_t_rd_spec, _t_rd_fact(1704067200000, 3211))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-RET-005"
	contains(f.message, "older than retention.data.max_age (400d)")
	contains(f.message, "the oldest event_time is 2024-01-01T00:00:00.000Z")
	contains(f.message, "(3211 expired rows)")
}

test_ret005_young_rows_pass if {
	inp := _t_rd_input(_t_rd_spec, _t_rd_fact(_t_rd_now - _t_rd_day, 0))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-005")
}

test_ret005_empty_table_passes if {
	inp := _t_rd_input(_t_rd_spec, _t_rd_fact(null, 0))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-005")
}

test_ret005_missing_column_fires if {
	fact := {"column": "event_time", "field_id": null, "type": null, "missing": true}
	inp := _t_rd_input(_t_rd_spec, fact)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-RET-005"
	f.path == "retention.data.column"
	contains(f.message, "does not exist in the live table schema of sales.orders (catalog lake)")
}

test_ret005_unusable_type_fires if {
	fact := {"column": "event_time", "field_id": 3, "type": "string", "missing": false, "error": "column event_time is string"}
	inp := _t_rd_input(_t_rd_spec, fact)
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-005") == {"retention.data.column"}
}

test_ret005_facts_for_another_column_ignored if {
	fact := object.union(_t_rd_fact(0, 5), {"column": "ingest_time"})
	inp := _t_rd_input(_t_rd_spec, fact)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-005")
}

test_ret005_silent_without_available_facts if {
	inp := {
		"contract": {"retention": {"data": _t_rd_spec}},
		"facts": {"data": {"available": false, "configured": true, "error": "Java is not installed", "retention": _t_rd_fact(0, 5)}},
		"now_ms": _t_rd_now,
	}
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-005")
}

test_ret005_silent_without_promise if {
	inp := json.patch(_t_rd_input(_t_rd_spec, _t_rd_fact(0, 5)), [{"op": "remove", "path": "/contract/retention/data"}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-005")
}
