package streamwarden.data

import rego.v1

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

# ---------------------------------------------------------------- SW-DATA-002

_t_unique(dups, samples) := {"columns": ["order_id"], "missing": [], "duplicate_keys": dups,
	"duplicate_rows": dups, "samples": samples}

# ---------------------------------------------------------------- SW-DATA-003

_t_nulls(q, req) := {
	"customer_id": {"field_id": 2, "missing": false, "nulls": q, "declared_in": ["quality.not_null", "table.schema"]},
	"order_id": {"field_id": 1, "missing": false, "nulls": req, "declared_in": ["table.schema"]},
}

# ---------------------------------------------------------------- SW-DATA-004

_t_snap(comparable, summary, counted, mismatches) := {"snapshot_id": 6907359049413089437, "operation": "append",
	"timestamp_ms": _t_now, "summary": summary, "counted": counted, "comparable": comparable, "mismatches": mismatches}

# ---------------------------------------------------------------- helpers of this package's rules

test_declared_text_names_each_place_in_order if {
	_declared_text({"declared_in": ["quality.not_null", "table.schema"]}) == "in quality.not_null and required in table.schema"
	_declared_text({"declared_in": ["table.schema"]}) == "required in table.schema"
}

test_examples_show_each_sampled_key_with_its_count if {
	_examples([]) == ""
	_examples([{"key": {"order_id": 7}, "count": 2}, {"key": {"order_id": 9}, "count": 3}]) == ", e.g. (order_id=7) x2; (order_id=9) x3"
	_values_text({"values_shown": false, "samples": [{"key": {"order_id": 7}, "count": 2}]}) == "; values not shown (the environment's iceberg.data.show_values is off)"
}
