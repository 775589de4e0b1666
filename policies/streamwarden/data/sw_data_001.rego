package streamwarden.data

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

# METADATA
# title: Data must be as fresh as the contract promises
# description: |
#   The newest value of quality.freshness.column among the table's live rows (after delete files)
#   may lag input.now_ms by at most quality.freshness.max_lag. Fires when it lags by more (equal
#   is fine), when no live row has a value (an empty table delivers nothing fresh), and when the
#   column is missing from the live table or is not a time column (timestamptz, timestamp, date,
#   or a long holding epoch milliseconds): then the promise cannot be proven.
# custom:
#   id: SW-DATA-001
#   severity: error
#   remediation: |
#     Find why new rows stopped arriving or lag: is the job running, committing (SW-TABLE-005), and
#     is its source backlogged? If the promise is wrong, change quality.freshness.max_lag.
#   example: |
#     quality: {freshness: {column: event_time, max_lag: 15m}}   # newest event_time is 47m old
deny contains f if {
	spec := _quality.freshness
	fact := _data.freshness
	fact.column == spec.column
	is_number(fact.max_ms)
	lag := input.now_ms - fact.max_ms
	lag > spec.max_lag
	f := lib.finding(
		"SW-DATA-001",
		"quality.freshness.max_lag",
		sprintf(
			"the newest %s in %s is %s, %s before now: above quality.freshness.max_lag (%s)",
			[spec.column, _table_name, object.get(fact, "max", fact.max_ms), lib.fmt_age(lag), lib.fmt_ms(spec.max_lag)],
		),
		object.union(_scan_evidence, {
			"column": spec.column, "max_ms": fact.max_ms, "lag_ms": lag,
			"max_lag_ms": spec.max_lag, "source": fact.source,
		}),
		{"source": "data"},
	)
}

# SW-DATA-001: no live row has a value
deny contains f if {
	spec := _quality.freshness
	fact := _data.freshness
	fact.column == spec.column
	fact.missing == false
	object.get(fact, "error", null) == null # (`not is_string(fact.error)` differs between OPA and regorus)
	object.get(fact, "max_ms", null) == null
	f := lib.finding(
		"SW-DATA-001",
		"quality.freshness.column",
		sprintf(
			"no live row of %s has a %s value: nothing is within quality.freshness.max_lag (%s)",
			[_table_name, spec.column, lib.fmt_ms(spec.max_lag)],
		),
		object.union(_scan_evidence, {"column": spec.column, "rows": _data.scan.rows_live}),
		{"source": "data"},
	)
}

# SW-DATA-001: the column cannot be measured
deny contains f if {
	spec := _quality.freshness
	fact := _data.freshness
	fact.column == spec.column
	msg := _unmeasurable(fact, "quality.freshness.column")
	f := lib.finding(
		"SW-DATA-001",
		"quality.freshness.column",
		sprintf("%s: freshness cannot be proven", [msg]),
		object.union(_scan_evidence, {"column": spec.column, "type": fact.type}),
		{"source": "data"},
	)
}
