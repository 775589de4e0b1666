package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: Every snapshot must carry Flink lineage when the contract requires it
# description: |
#   With table.commit.lineage: required, every snapshot in the window of the checked branch must
#   carry flink.job-id, flink.operator-id and flink.max-committed-checkpoint-id, the keys the
#   Iceberg Flink sink writes. Maintenance snapshots (operation replace: compaction, manifest
#   rewrites) are exempt. One finding per group of snapshots lacking the same keys, naming the
#   snapshot ids.
# custom:
#   id: SW-TABLE-007
#   severity: error
#   remediation: |
#     Write the table only through the Iceberg Flink sink (an Iceberg release that writes
#     flink.operator-id), route other writers through a declared backfill, or set
#     table.commit.lineage to optional.
#   example: |
#     table: {commit: {lineage: required}}   # a Spark job appended snapshot 4711 without flink.* keys
deny contains f if {
	_table.commit.lineage == "required"
	some g in _ice_lineage.missing_lineage
	f := lib.finding(
		"SW-TABLE-007",
		"table.commit.lineage",
		sprintf(
			"%v %s snapshot(s) on branch %s of %s lack %s (%s): snapshots %s",
			[g.count, g.operation, _ice.branch, _ice_name, concat(", ", g.missing), _t007_job(g.job_id), _ice_ids(g.snapshot_ids)],
		),
		{"missing": g.missing, "operation": g.operation, "job_id": g.job_id, "count": g.count, "snapshot_ids": g.snapshot_ids},
		{"source": "iceberg", "value": sprintf("%v/%v/%v", [concat(",", g.missing), g.operation, g.job_id])},
	)
}
