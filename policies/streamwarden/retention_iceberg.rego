# Retention (SW-RET): the Iceberg-catalog side, on input.facts.iceberg (docs/facts-iceberg.md).
# facts.iceberg.retention holds what snapshot expiry keeps on the checked branch: the branch ref's
# own values, else the table's history.expire.* properties, else Iceberg's defaults (5 days, 1).
# Findings have "source": "iceberg" and the contract field concerned as their path.
package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

_ice := lib.iceberg(input)

_ice_retention := object.get(input.contract, "retention", {})

_ice_name := lib.iceberg_name(_ice)

_ice_source_text(source) := "the branch ref" if {
	source == "ref"
} else := "Iceberg's default" if {
	source == "default"
} else := "the table property"

# The contract's promises on how far back the table must be restorable.
_ice_promises contains {"path": "retention.rollback_window", "value": _ice_retention.rollback_window} if {
	is_number(_ice_retention.rollback_window)
}

_ice_promises contains {"path": "retention.snapshots.max_age", "value": _ice_retention.snapshots.max_age} if {
	is_number(_ice_retention.snapshots.max_age)
}

# METADATA
# title: Table snapshots must be kept as long as the contract promises
# description: |
#   Snapshot expiry removes snapshots older than history.expire.max-snapshot-age-ms (Iceberg's
#   default: 5 days; a branch ref's max-snapshot-age-ms overrides it). Fires when that is shorter
#   than retention.rollback_window or retention.snapshots.max_age (one finding per promise): the
#   table could not be rolled back as far as the job can.
# custom:
#   id: SW-RET-001
#   severity: error
#   remediation: |
#     Raise history.expire.max-snapshot-age-ms on the table (or the branch's
#     max-snapshot-age-ms) to at least the promise, or shorten the promise.
#   example: |
#     retention: {rollback_window: 7d}   # the table keeps the default 5 days
deny contains f if {
	kept := _ice.retention.max_snapshot_age_ms
	is_number(kept)
	some p in _ice_promises
	kept < p.value
	f := lib.finding(
		"SW-RET-001",
		p.path,
		sprintf(
			"%s keeps snapshots of branch %s for %s (history.expire.max-snapshot-age-ms, from %s), shorter than %s %s",
			[_ice_name, _ice.branch, lib.fmt_ms(kept), _ice_source_text(_ice.retention.max_snapshot_age_ms_source), p.path, lib.fmt_ms(p.value)],
		),
		{
			"max_snapshot_age_ms": kept,
			"source": _ice.retention.max_snapshot_age_ms_source,
			"promise": p.value,
			"branch": _ice.branch,
		},
		{"source": "iceberg"},
	)
}

# METADATA
# title: Table snapshots kept by count must reach the contract's minimum
# description: |
#   Fires when history.expire.min-snapshots-to-keep (Iceberg's default: 1; a branch ref's
#   min-snapshots-to-keep overrides it) is below retention.snapshots.min_keep.
# custom:
#   id: SW-RET-003
#   severity: warning
#   remediation: |
#     Set history.expire.min-snapshots-to-keep on the table to at least retention.snapshots.min_keep.
#   example: |
#     retention: {snapshots: {min_keep: 20}}   # the table keeps the default 1
warn contains f if {
	wanted := _ice_retention.snapshots.min_keep
	is_number(wanted)
	kept := _ice.retention.min_snapshots_to_keep
	is_number(kept)
	kept < wanted
	f := lib.finding(
		"SW-RET-003",
		"retention.snapshots.min_keep",
		sprintf(
			"%s keeps at least %v snapshots of branch %s (history.expire.min-snapshots-to-keep, from %s), below retention.snapshots.min_keep %v",
			[_ice_name, kept, _ice.branch, _ice_source_text(_ice.retention.min_snapshots_to_keep_source), wanted],
		),
		{"min_snapshots_to_keep": kept, "source": _ice.retention.min_snapshots_to_keep_source, "min_keep": wanted},
		{"source": "iceberg"},
	)
}

# The longest age any retention setting allows: the table's, and the contract's promises.
_ice_allowed := max(array.concat([_ice.retention.max_snapshot_age_ms], [p.value | some p in _ice_promises])) if {
	is_number(_ice.retention.max_snapshot_age_ms)
}

# METADATA
# title: Snapshot expiry must be running
# description: |
#   Fires when the oldest snapshot that expiry could remove (not the snapshot of a branch or tag,
#   not among a branch's min-snapshots-to-keep newest) is more than twice as old as the longest
#   retention in force (the table's history.expire.max-snapshot-age-ms, or the contract's
#   rollback_window / snapshots.max_age when longer): expiry is not running, and table
#   metadata grows without bound. Twice leaves room for a daily or weekly expiry job.
# custom:
#   id: SW-RET-004
#   severity: error
#   remediation: |
#     Schedule snapshot expiry (Spark CALL system.expire_snapshots, the Flink maintenance API, or
#     your platform's table service) and check that it succeeds.
#   example: |
#     # the table keeps snapshots 5 days; the oldest one is 40 days old
deny contains f if {
	oldest := _ice.snapshots.oldest_unprotected
	is_object(oldest)
	allowed := _ice_allowed
	age := input.now_ms - oldest.timestamp_ms
	age > 2 * allowed
	f := object.union(
		lib.finding(
			"SW-RET-004",
			"retention.snapshots.max_age",
			sprintf(
				"the oldest expirable snapshot of %s (%v) is %s old, more than twice the %s retention: snapshot expiry is not running (%v snapshots in the table metadata)",
				[_ice_name, oldest.snapshot_id, lib.fmt_age(age), lib.fmt_ms(allowed), _ice.snapshots.total],
			),
			{"snapshot_id": oldest.snapshot_id, "timestamp_ms": oldest.timestamp_ms, "age_ms": age, "allowed_ms": allowed, "snapshots": _ice.snapshots.total},
			{"source": "iceberg"},
		),
		{"value": "expiry-not-running"},
	)
}

# METADATA
# title: Old metadata files must be deleted after commit
# description: |
#   Fires when the live table's write.metadata.delete-after-commit.enabled is not true (Iceberg's
#   default is false): every commit leaves a metadata.json behind, and a streaming job commits
#   every checkpoint, so metadata files pile up in storage.
# custom:
#   id: SW-RET-006
#   severity: warning
#   remediation: |
#     Set write.metadata.delete-after-commit.enabled=true (and write.metadata.previous-versions-max)
#     on the table, and declare it under table.properties.
#   example: |
#     table: {properties: {write.metadata.delete-after-commit.enabled: "true"}}   # the table says false
warn contains f if {
	live := object.get(_ice.properties, "write.metadata.delete-after-commit.enabled", "false")
	lower(sprintf("%v", [live])) != "true"
	f := object.union(
		lib.finding(
			"SW-RET-006",
			`table.properties["write.metadata.delete-after-commit.enabled"]`,
			sprintf(
				"%s has write.metadata.delete-after-commit.enabled=%v: old metadata files are never deleted and pile up with every commit",
				[_ice_name, live],
			),
			{"write.metadata.delete-after-commit.enabled": live, "previous_versions_max": object.get(_ice.properties, "write.metadata.previous-versions-max", null)},
			{"source": "iceberg"},
		),
		{"value": live},
	)
}
