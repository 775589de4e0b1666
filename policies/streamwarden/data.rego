# Data facts (SW-DATA): what a Spark scan of the table's live rows proves about the contract's
# quality promises, on input.facts.data (docs/facts-data.md). Silent unless the data facts are
# available: a configured scan that failed is SW-FACT-001's to report. Findings have
# "source": "data" and the contract field concerned as their path.
package streamwarden.data

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

_data := input.facts.data if input.facts.data.available == true

_quality := object.get(input.contract, "quality", {})

_table_name := sprintf("%v (catalog %v)", [_data.table, _data.catalog])

# A time column the scan could not measure: missing from the table, or of a type without time.
_unmeasurable(fact, field) := sprintf("%s %s does not exist in the live table schema of %s", [field, fact.column, _table_name]) if {
	fact.missing == true
} else := sprintf("%s %s cannot be measured: %s", [field, fact.column, fact.error]) if {
	is_string(fact.error)
}

_scan_evidence := {"scan_mode": _data.scan.mode, "snapshot_id": _data.snapshot_id}

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

_key_text(sample) := concat(", ", [sprintf("%s=%v", [k, v]) | some k, v in sample.key])

# the duplicated values, or why none are shown (the environment shows row values only where
# iceberg.data.show_values allows it)
_values_text(fact) := "; values not shown (the environment's iceberg.data.show_values is off)" if {
	fact.values_shown == false
} else := _examples(fact.samples)

_examples(samples) := "" if {
	count(samples) == 0
} else := sprintf(", e.g. %s", [concat("; ", [sprintf("(%s) x%v", [_key_text(s), s.count]) | some s in samples])])

# METADATA
# title: Unique keys must be unique among live rows
# description: |
#   The values of the quality.unique columns, taken together, must not repeat among the table's
#   live rows: rows removed by position or equality delete files do not count, as for any reader.
#   Keys with a null part are not compared (nulls are SW-DATA-003's). Fires when a key occurs
#   more than once (with up to ten sample keys), and when a quality.unique column is missing from
#   the live table. An incremental scan checks the new rows' keys against the whole table.
# custom:
#   id: SW-DATA-002
#   severity: error
#   remediation: |
#     Find the writer of the duplicates (a replayed checkpoint, SW-TABLE-008/009; an append-only sink
#     where upserts were needed, write.upsert.enabled with identifier fields); remove them with a
#     delete, and make the sink idempotent.
#   example: |
#     quality: {unique: [order_id]}   # order_id 42 is live twice
deny contains f if {
	keys := _quality.unique
	fact := _data.unique
	fact.columns == keys
	fact.duplicate_keys > 0
	f := lib.finding(
		"SW-DATA-002",
		"quality.unique",
		sprintf(
			"%v value(s) of (%s) occur more than once among the live rows of %s (%v surplus rows)%s",
			[fact.duplicate_keys, concat(", ", keys), _table_name, fact.duplicate_rows, _values_text(fact)],
		),
		object.union(_scan_evidence, {
			"columns": keys, "duplicate_keys": fact.duplicate_keys,
			"duplicate_rows": fact.duplicate_rows, "samples": fact.samples,
		}),
		{"source": "data"},
	)
}

# SW-DATA-002: key columns the table does not have
deny contains f if {
	keys := _quality.unique
	fact := _data.unique
	fact.columns == keys
	count(fact.missing) > 0
	f := lib.finding(
		"SW-DATA-002",
		"quality.unique",
		sprintf(
			"quality.unique names %s, which the live table schema of %s does not have: uniqueness cannot be proven",
			[concat(", ", fact.missing), _table_name],
		),
		object.union(_scan_evidence, {"columns": keys, "missing": fact.missing}),
		{"source": "data"},
	)
}

# Where a not-null promise is declared: quality.not_null[i] first, else table.schema[j].required.
_null_path(col) := sprintf("quality.not_null[%d]", [i]) if {
	some i, c in _quality.not_null
	c == col
} else := sprintf("table.schema[%d].required", [j]) if {
	some j, fld in input.contract.table.schema
	fld.name == col
} else := "quality.not_null"

_declared_text(info) := concat(" and ", [_declared_word(d) | some d in info.declared_in])

_declared_word(d) := "in quality.not_null" if d == "quality.not_null"

_declared_word(d) := "required in table.schema" if d == "table.schema"

# METADATA
# title: Not-null columns must hold no nulls
# description: |
#   Columns listed in quality.not_null, and fields declared required in table.schema, must have no
#   null value among the table's live rows. One finding per column with nulls, with the count;
#   also fires when a quality.not_null column is missing from the live table (a required field
#   that is missing is SW-TABLE-001's).
# custom:
#   id: SW-DATA-003
#   severity: error
#   remediation: |
#     Find the writer of the nulls (a source field that went missing, a join that no longer
#     matches); fix or delete the rows, and make the column required in the table where it can be.
#   example: |
#     quality: {not_null: [customer_id]}   # 12 live rows have customer_id null
deny contains f if {
	some col, info in _data.not_null
	is_number(info.nulls)
	info.nulls > 0
	f := lib.finding(
		"SW-DATA-003",
		_null_path(col),
		sprintf(
			"column %s of %s holds %v null(s) among its live rows, but it is declared %s",
			[col, _table_name, info.nulls, _declared_text(info)],
		),
		object.union(_scan_evidence, {"column": col, "nulls": info.nulls, "declared_in": info.declared_in}),
		{"source": "data", "value": col},
	)
}

# SW-DATA-003: a quality.not_null column the table does not have
deny contains f if {
	some col, info in _data.not_null
	info.missing == true
	"quality.not_null" in info.declared_in
	f := lib.finding(
		"SW-DATA-003",
		_null_path(col),
		sprintf(
			"quality.not_null names %s, which the live table schema of %s does not have: it cannot be proven non-null",
			[col, _table_name],
		),
		object.union(_scan_evidence, {"column": col, "missing": true}),
		{"source": "data", "value": col},
	)
}

# METADATA
# title: Snapshot summaries must match the rows their files hold
# description: |
#   For each snapshot in the scanned window whose added files are all still live, the rows counted
#   in the data files it added, and in the position and equality delete files it added, must equal
#   its summary's added-records, added-position-deletes and added-equality-deletes. A difference
#   means a writer's metadata does not describe its data (a manifest record_count that lies, a file
#   replaced underneath the table): planning, row counts and incremental readers are then wrong.
#   Snapshots whose files were since removed (compaction, overwrite) cannot be counted and are skipped.
# custom:
#   id: SW-DATA-004
#   severity: warning
#   remediation: |
#     Inspect the snapshot's manifests (tbl.inspect.entries) against its files; find the writer
#     that produced the mismatch and rewrite the affected files (rewrite_data_files) to restore
#     correct metadata.
#   example: |
#     summary added-records = 1000, but the data files the snapshot added hold 990 rows
warn contains f if {
	some s in _data.snapshots
	s.comparable == true
	some key in s.mismatches
	f := lib.finding(
		"SW-DATA-004",
		"table.identifier",
		sprintf(
			"snapshot %v (%v) of %s says %s = %v in its summary, but the files it added hold %v",
			[s.snapshot_id, s.operation, _table_name, key, s.summary[key], s.counted[key]],
		),
		{"snapshot_id": s.snapshot_id, "summary_key": key, "summary": s.summary[key], "counted": s.counted[key]},
		{"source": "data", "value": sprintf("%v:%s", [s.snapshot_id, key])},
	)
}
