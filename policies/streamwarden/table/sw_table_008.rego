package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: A checkpoint must not be committed twice
# description: |
#   Fires when two snapshots along the checked branch carry the same flink.job-id,
#   flink.operator-id and flink.max-committed-checkpoint-id: the checkpoint's data files were
#   committed twice, so readers see its rows twice (the known failure after a commit whose
#   outcome was unknown, or a committer replaying its state).
# custom:
#   id: SW-TABLE-008
#   severity: error
#   remediation: |
#     Roll the table back to the snapshot before the second commit (or delete the duplicated
#     files' rows), then upgrade the Iceberg Flink sink to a release with the duplicate fix.
#   example: |
#     # snapshots 101 and 102 both carry job a1b2..., checkpoint 42
deny contains f if {
	some d in _ice_lineage.duplicates
	f := lib.finding(
		"SW-TABLE-008",
		"table.identifier",
		sprintf(
			"checkpoint %v of job %v (operator %v) was committed %v times to %s on branch %s: snapshots %s",
			[d.checkpoint_id, d.job_id, d.operator_id, d.count, _ice_name, _ice.branch, _ice_ids(d.snapshot_ids)],
		),
		{"job_id": d.job_id, "operator_id": d.operator_id, "checkpoint_id": d.checkpoint_id, "snapshot_ids": d.snapshot_ids},
		{"source": "iceberg", "value": sprintf("%v/%v/%v", [d.job_id, d.operator_id, d.checkpoint_id])},
	)
}
