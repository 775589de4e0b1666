package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: A job's committed checkpoint id must not go backwards
# description: |
#   Along the checked branch's ancestry, fires when a (job, operator)'s
#   flink.max-committed-checkpoint-id drops below its previous commit, or when a job takes over
#   the sink operator from the job before it (a restore: new job id) and starts at or below the
#   checkpoint id its predecessor had already committed. Below it, the job was restored from an
#   older checkpoint or savepoint: the commits in between are replayed (duplicates), or skipped by
#   the committer (loss). At the same id, the committer committed its predecessor's last
#   checkpoint again under the new job id (it looks its last commit up by job id): that
#   checkpoint's data may be in the table twice. A restore from the latest checkpoint continues
#   above it and passes. Long.MAX_VALUE (a bounded job's end of input) never counts.
# custom:
#   id: SW-TABLE-009
#   severity: error
#   remediation: |
#     Check which savepoint the job was restored from; roll the table back to the snapshot that
#     savepoint committed (streamwarden evidence names it), or dedupe the replayed range.
#   example: |
#     # job a1b2... committed checkpoint 40 (snapshot 101), then checkpoint 35 (snapshot 102)
deny contains f if {
	some b in _ice_lineage.backwards
	f := lib.finding(
		"SW-TABLE-009",
		"table.identifier",
		_ice_backwards_message(b),
		{
			"kind": b.kind,
			"job_id": b.job_id,
			"operator_id": b.operator_id,
			"snapshot_id": b.snapshot_id,
			"checkpoint_id": b.checkpoint_id,
			"previous_job_id": b.previous_job_id,
			"previous_snapshot_id": b.previous_snapshot_id,
			"previous_checkpoint_id": b.previous_checkpoint_id,
		},
		{"source": "iceberg", "value": sprintf("%v/%v/%v", [b.job_id, b.operator_id, b.checkpoint_id])},
	)
}
