# Retention (SW-RET): the contract side. Other sources live in the other sw_ret_NNN.rego files.
package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Savepoints must not outlive table snapshots
# description: |
#   Restoring a savepoint means rolling the table back to the snapshot it committed. Fires when
#   retention.savepoints.max_age is above retention.snapshots.max_age (equal is fine): an old
#   savepoint would have no table snapshot left to roll back to.
# custom:
#   id: SW-RET-002
#   severity: error
#   remediation: |
#     Keep table snapshots at least as long as savepoints: raise retention.snapshots.max_age
#     (and history.expire.max-snapshot-age-ms) or lower retention.savepoints.max_age.
#   example: |
#     retention: {snapshots: {max_age: 7d}, savepoints: {max_age: 30d}}
deny contains f if {
	savepoints := input.contract.retention.savepoints.max_age
	snapshots := input.contract.retention.snapshots.max_age
	is_number(savepoints)
	is_number(snapshots)
	savepoints > snapshots
	f := {
		"rule": "SW-RET-002",
		"message": sprintf(
			"retention.savepoints.max_age (%s) is longer than retention.snapshots.max_age (%s): restoring an older savepoint leaves no table snapshot to roll back to; keep snapshots at least as long as savepoints",
			[lib.fmt_ms(savepoints), lib.fmt_ms(snapshots)],
		),
		"path": "retention.savepoints.max_age",
		"evidence": {"savepoints_max_age": savepoints, "snapshots_max_age": snapshots},
	}
}
