package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: A data file must not be added twice
# description: |
#   Fires when the same data file path was added by two snapshots of the checked branch, or
#   appears in two manifest entries added by one snapshot: its rows are read twice. Read from the
#   manifests of the newest snapshots in the window (capped, see docs/facts-iceberg.md); silent
#   when the manifests were not read.
# custom:
#   id: SW-TABLE-011
#   severity: error
#   remediation: |
#     Remove the duplicate entry (roll back past the second add, or rewrite the file's rows out
#     with a delete), and find the writer that re-committed it (SW-TABLE-008 often names it).
#   example: |
#     # data/00000-0-....parquet added by snapshots 101 and 102
deny contains f if {
	some d in object.get(object.get(_ice, "files", {}), "duplicates", [])
	f := lib.finding(
		"SW-TABLE-011",
		"table.identifier",
		sprintf(
			"data file %s is in %v manifest entries of %s on branch %s, added by snapshot(s) %s: its rows are read twice",
			[d.path, d.entries, _ice_name, _ice.branch, _ice_ids(d.snapshot_ids)],
		),
		{"path": d.path, "snapshot_ids": d.snapshot_ids, "entries": d.entries, "kind": d.kind},
		{"source": "iceberg", "value": d.path},
	)
}
