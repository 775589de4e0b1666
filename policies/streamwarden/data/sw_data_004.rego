package streamwarden.data

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

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
