package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

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
