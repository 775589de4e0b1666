# Retention (SW-RET): the data side, on input.facts.data (docs/facts-data.md): rows the contract
# says must be gone. Silent unless the data facts are available (a failed scan is SW-FACT-001's).
package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

# METADATA
# title: Rows older than the data retention must be gone
# description: |
#   No live row (after delete files) may have retention.data.column older than
#   retention.data.max_age before input.now_ms. Fires when the oldest value is older (a row exactly
#   max_age old is fine), with the number of such rows; also when the column is missing from the
#   live table or is not a time column (timestamptz, timestamp, date, or a long holding epoch
#   milliseconds), since then the retention cannot be proven.
# custom:
#   id: SW-RET-005
#   severity: error
#   remediation: |
#     Run (or fix) the job that deletes expired rows, e.g. a scheduled
#     DELETE FROM <table> WHERE <column> < now() - <max_age>, then expire snapshots so the old data
#     files are removed too; or change retention.data.max_age if the promise is wrong.
#   example: |
#     retention: {data: {column: event_time, max_age: 400d}}   # rows from 2 years ago are live
deny contains f if {
	spec := input.contract.retention.data
	fact := _rd.retention
	fact.column == spec.column
	is_number(fact.min_ms)
	cutoff := input.now_ms - spec.max_age
	fact.min_ms < cutoff
	f := {
		"rule": "SW-RET-005",
		"message": sprintf(
			"%s holds rows older than retention.data.max_age (%s): the oldest %s is %s, before the cutoff %s (%v expired rows)",
			[
				_rd_name, lib.fmt_ms(spec.max_age), spec.column, object.get(fact, "min", fact.min_ms),
				object.get(fact, "cutoff", cutoff), object.get(fact, "expired_rows", "some"),
			],
		),
		"path": "retention.data.max_age",
		"source": "data",
		"evidence": _rd_evidence(spec, fact, cutoff),
	}
}

_rd := lib.gathered(input.facts.data)

_rd_name := lib.data_table_name(_rd)

_rd_evidence(spec, fact, cutoff) := {
	"column": spec.column,
	"min_ms": fact.min_ms,
	"cutoff_ms": cutoff,
	"max_age_ms": spec.max_age,
	"expired_rows": object.get(fact, "expired_rows", null),
	"scan_mode": _rd.scan.mode,
	"snapshot_id": _rd.snapshot_id,
}

# SW-RET-005: the column cannot be measured
deny contains f if {
	spec := input.contract.retention.data
	fact := _rd.retention
	fact.column == spec.column
	msg := _rd_unmeasurable(fact)
	f := {
		"rule": "SW-RET-005",
		"message": sprintf("%s: data retention cannot be proven", [msg]),
		"path": "retention.data.column",
		"source": "data",
		"evidence": {"column": spec.column, "type": fact.type, "scan_mode": _rd.scan.mode},
	}
}

_rd_unmeasurable(fact) := sprintf("retention.data.column %s does not exist in the live table schema of %s", [fact.column, _rd_name]) if {
	fact.missing == true
} else := sprintf("retention.data.column %s cannot be measured: %s", [fact.column, fact.error]) if {
	is_string(fact.error)
}
