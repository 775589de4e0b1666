package streamwarden.data

import rego.v1

import data.streamwarden.lib

_t_now := 1795608000000 # 2026-11-25T12:00:00Z

_t_schema := [
	{"name": "order_id", "type": "long", "required": true},
	{"name": "customer_id", "type": "long", "required": true},
	{"name": "event_time", "type": "timestamptz", "required": true},
]

_t_data(extra) := object.union(
	{
		"available": true, "configured": true, "catalog": "lake", "table": "sales.orders",
		"snapshot_id": 6907359049413089437, "scan": {"mode": "full", "rows_live": 10},
	},
	extra,
)

_t_input(quality, fact) := {
	"contract": {"quality": quality, "table": {"schema": _t_schema}},
	"facts": {"data": fact},
	"now_ms": _t_now,
}

_t_fresh(max_ms) := {"column": "event_time", "field_id": 3, "type": "timestamptz", "missing": false,
	"max_ms": max_ms, "max": "2026-11-25T11:45:00.000Z", "source": "scan"}

_t_quality_fresh := {"freshness": {"column": "event_time", "max_lag": 900000}}

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

# ---------------------------------------------------------------- SW-DATA-002

_t_unique(dups, samples) := {"columns": ["order_id"], "missing": [], "duplicate_keys": dups,
	"duplicate_rows": dups, "samples": samples}

test_data002_duplicates_fire_with_samples if {
	samples := [{"key": {"order_id": 42}, "count": 2}, {"key": {"order_id": 7}, "count": 2}]
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": _t_unique(2, samples)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-002") == {"quality.unique"}
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "2 value(s) of (order_id) occur more than once")
	contains(f.message, "(order_id=42) x2")
	f.evidence.samples == samples
}

test_data002_values_not_shown_gives_counts_only if {
	fact := object.union(_t_unique(3, []), {"values_shown": false})
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "3 value(s) of (order_id) occur more than once")
	contains(f.message, "values not shown (the environment's iceberg.data.show_values is off)")
	not contains(f.message, "e.g.")
	f.evidence.samples == []
}

test_data002_values_shown_true_lists_samples if {
	samples := [{"key": {"order_id": 42}, "count": 2}]
	fact := object.union(_t_unique(1, samples), {"values_shown": true})
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "e.g. (order_id=42) x2")
	not contains(f.message, "values not shown")
}

test_data002_no_duplicates_pass if {
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": _t_unique(0, [])}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-002")
}

test_data002_one_duplicate_fires if {
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": _t_unique(1, [])}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-002") == {"quality.unique"}
}

test_data002_compound_key if {
	fact := {"columns": ["order_id", "line"], "missing": [], "duplicate_keys": 1, "duplicate_rows": 2,
		"samples": [{"key": {"order_id": 1, "line": "a"}, "count": 3}]}
	inp := _t_input({"unique": ["order_id", "line"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "(order_id, line)")
	contains(f.message, "(line=a, order_id=1) x3")
}

test_data002_missing_key_column_fires if {
	fact := {"columns": ["order_id"], "missing": ["order_id"], "duplicate_keys": null, "duplicate_rows": null, "samples": []}
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "uniqueness cannot be proven")
}

test_data002_facts_for_other_key_ignored if {
	inp := _t_input({"unique": ["customer_id"]}, _t_data({"unique": _t_unique(3, [])}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-002")
}

test_data002_silent_when_unavailable if {
	inp := _t_input({"unique": ["order_id"]}, {"available": false, "configured": true, "unique": _t_unique(3, [])})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-002")
}

# ---------------------------------------------------------------- SW-DATA-003

_t_nulls(q, req) := {
	"customer_id": {"field_id": 2, "missing": false, "nulls": q, "declared_in": ["quality.not_null", "table.schema"]},
	"order_id": {"field_id": 1, "missing": false, "nulls": req, "declared_in": ["table.schema"]},
}

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

# ---------------------------------------------------------------- SW-DATA-004

_t_snap(comparable, summary, counted, mismatches) := {"snapshot_id": 6907359049413089437, "operation": "append",
	"timestamp_ms": _t_now, "summary": summary, "counted": counted, "comparable": comparable, "mismatches": mismatches}

test_data004_mismatch_warns if {
	snap := _t_snap(true, {"added-records": 1000}, {"added-records": 990}, ["added-records"])
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-DATA-004") == {"table.identifier"}
	some f in findings
	contains(f.message, "snapshot 6907359049413089437 (append)")
	contains(f.message, "added-records = 1000 in its summary, but the files it added hold 990")
}

test_data004_matching_counts_pass if {
	snap := _t_snap(true, {"added-records": 5}, {"added-records": 5}, [])
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-DATA-004")
}

test_data004_not_comparable_is_skipped if {
	snap := _t_snap(false, {"added-records": 5}, {"added-records": 2}, [])
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-DATA-004")
}

test_data004_one_finding_per_mismatched_count if {
	snap := _t_snap(
		true,
		{"added-records": 5, "added-position-deletes": 2},
		{"added-records": 4, "added-position-deletes": 1},
		["added-records", "added-position-deletes"],
	)
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	count([f | some f in findings; f.rule == "SW-DATA-004"]) == 2
}

test_data004_silent_when_unavailable if {
	snap := _t_snap(true, {"added-records": 1}, {"added-records": 0}, ["added-records"])
	inp := _t_input({}, {"available": false, "configured": true, "snapshots": [snap]})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-DATA-004")
}
