package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: Snapshots without Flink lineage must be maintenance
# description: |
#   Fires for snapshots in the window of the checked branch that carry no flink.job-id and are
#   not maintenance (operation replace): a writer other than the Flink job (a batch job, a manual
#   fix, a DELETE). One finding per operation and writer engine (summary engine-name when set),
#   naming the snapshot ids.
# custom:
#   id: SW-TABLE-012
#   severity: warning
#   remediation: |
#     Route other writers through a declared backfill (on a branch), or make them stamp their
#     commits; for a one-off fix, waive with the reason.
#   example: |
#     # snapshot 4711 (operation overwrite, no flink.* keys) between the job's commits
warn contains f if {
	some g in _ice_lineage.out_of_band
	f := lib.finding(
		"SW-TABLE-012",
		"table.identifier",
		sprintf(
			"%v %s snapshot(s) on branch %s of %s carry no Flink lineage (writer %v): snapshots %s",
			[g.count, g.operation, _ice.branch, _ice_name, lib.quote(g.writer), _ice_ids(g.snapshot_ids)],
		),
		{"operation": g.operation, "writer": g.writer, "count": g.count, "snapshot_ids": g.snapshot_ids},
		{"source": "iceberg", "value": sprintf("%v/%v", [g.operation, g.writer])},
	)
}
