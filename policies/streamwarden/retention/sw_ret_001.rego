package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

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
