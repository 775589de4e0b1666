# Retention (SW-RET): the restore side. A savepoint or retained checkpoint is a recovery point only
# while the table still holds the snapshot of its checkpoint. Reads facts.savepoint.table (the
# savepoint to restore against the branch's ancestry) and facts.savepoint.retained (the retained
# checkpoints and savepoints Flink REST reports, each matched against the same ancestry).
package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink, facts.savepoint]

# METADATA
# title: Retained savepoints and checkpoints must keep their table snapshot
# description: |
#   Each committed checkpoint has a table snapshot (the newest commit of the job at or below its
#   id). When snapshot expiry removes it, restoring that savepoint or checkpoint can no longer be
#   paired with a table rollback. Fires for the savepoint to restore, and for each retained
#   checkpoint or savepoint Flink reports, whose checkpoint id is at or below the table's max
#   committed checkpoint id for its job while no commit of that job at or below it is left on the
#   branch and the ancestry was cut by expiry. Checkpoints newer than the last commit are not
#   committed yet and never fire; a job whose first commit came later never committed them.
# custom:
#   id: SW-RET-007
#   severity: error
#   remediation: |
#     Keep snapshots at least as long as savepoints and retained checkpoints (raise
#     history.expire.max-snapshot-age-ms / min-snapshots-to-keep, or tag the snapshot of each
#     savepoint), and stop restoring from recovery points whose snapshot is gone.
#   example: |
#     retention: {snapshots: {max_age: 1d}, savepoints: {max_age: 7d}}   # expiry removed checkpoint 12's snapshot
deny contains f if {
	t := _rs_sp.table
	is_object(t)
	is_number(t.max_committed_checkpoint_id)
	t.checkpoint_id <= t.max_committed_checkpoint_id
	object.get(t, "matching_snapshot", null) == null
	t.matching_missing == "expired"
	f := _rs_finding(sprintf("the savepoint to restore (%s)", [_rs_sp.location]), t.checkpoint_id, t.max_committed_checkpoint_id, t.job_id)
}

_rs_sp := lib.gathered(input.facts.savepoint)

_rs_path := "retention.snapshots.max_age" if {
	is_number(input.contract.retention.snapshots.max_age)
} else := "retention.rollback_window" if {
	is_number(input.contract.retention.rollback_window)
} else := "retention"

_rs_finding(point, checkpoint_id, max_committed, job_id) := lib.finding(
	"SW-RET-007",
	_rs_path,
	sprintf(
		"%s at checkpoint %v is at or below the table's max committed checkpoint %v for job %s, but the snapshot holding the table as of that checkpoint has been expired: restoring it leaves no table state to roll back to",
		[point, checkpoint_id, max_committed, job_id],
	),
	{"point": point, "checkpoint_id": checkpoint_id, "max_committed_checkpoint_id": max_committed, "job_id": job_id},
	{"source": "savepoint", "value": {"job_id": job_id, "checkpoint_id": checkpoint_id}},
)

# SW-RET-007: retained checkpoints and savepoints that Flink reports
deny contains f if {
	some r in object.get(input.facts, ["savepoint", "retained"], [])
	r.at_or_below_committed == true
	r.matching_missing == "expired"
	not _rs_is_candidate(r)
	point := sprintf("retained %s %s", [_rs_point_kind(r), r.external_path])
	f := _rs_finding(point, r.checkpoint_id, r.max_committed_checkpoint_id, object.get(input.facts, ["flink", "job_id"], null))
}

_rs_point_kind(r) := "savepoint" if {
	r.is_savepoint == true
} else := "checkpoint"

# The savepoint to restore is reported once, by the body above.
_rs_is_candidate(r) if {
	is_object(_rs_sp.table)
	r.checkpoint_id == _rs_sp.checkpoint_id
}
