package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

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
