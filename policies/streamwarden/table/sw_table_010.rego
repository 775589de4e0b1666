package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: Only declared backfills may write the table beside the job
# description: |
#   Fires when snapshots from two Flink job ids interleave along the checked branch (A B A: both
#   were writing at the same time) and no declared backfill covers either job: backfills[] match
#   by job_id, or by job name resolved to ids through the Flink REST facts. An undeclared fork
#   doubles or reorders data. A restore that gives the pipeline a new job id (A A B B) does not
#   interleave and passes.
# custom:
#   id: SW-TABLE-010
#   severity: error
#   remediation: |
#     Stop the undeclared job, or declare it under backfills (job, job_id, branch, from/to,
#     reason) so reviewers and the evidence record know about it; a job with a contract of its
#     own declares itself a backfill or fork of this pipeline there (fork_of, SW-TABLE-014).
#   example: |
#     backfills: []   # job f0f0... committed snapshot 103 between snapshots 102 and 104 of job a1b2...
deny contains f if {
	some pair in _ice_lineage.interleavings
	not _ice_declared(pair)
	f := lib.finding(
		"SW-TABLE-010",
		"backfills",
		sprintf(
			"jobs %v and %v both commit to %s on branch %s (interleaved: %s) and no backfill declares either: an undeclared fork, two jobs writing at the same time (a restore hands over from one job id to the next without interleaving)",
			[pair.job_ids[0], pair.job_ids[1], _ice_name, _ice.branch, _ice_pattern_text(pair.pattern)],
		),
		{"job_ids": pair.job_ids, "pattern": pair.pattern, "snapshot_counts": object.get(pair, "snapshot_counts", null)},
		{"source": "iceberg", "value": concat("/", sort(pair.job_ids))},
	)
}
