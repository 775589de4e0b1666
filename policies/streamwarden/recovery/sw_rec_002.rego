package streamwarden.recovery

import rego.v1

# METADATA
# custom:
#   requires: [facts.savepoint, mode.gate]

# METADATA
# title: A restore behind the table's commits needs an idempotent sink or a rollback target
# description: |
#   The Iceberg sink commits once per checkpoint. Restoring a savepoint whose checkpoint id is
#   behind the table's max committed checkpoint for that job replays every checkpoint after it:
#   an append sink writes those rows a second time (and a job that keeps its job id may skip them
#   as already committed). Fires when the savepoint's checkpoint is below the max committed
#   checkpoint id of the same job and committer on the branch, the sink is not idempotent (no
#   write.upsert.enabled with identifier fields on the live table), and no valid rollback target
#   is named (the snapshot of the savepoint's checkpoint, or a later one older than the first
#   replayed commit). Reports the snapshot to roll back to and the replay window. Also fires,
#   failing closed, when the table holds the committer's commits of several jobs and nothing
#   tells which job took the savepoint.
# custom:
#   id: SW-REC-002
#   severity: error
#   remediation: |
#     Roll the table back to the snapshot of the savepoint's checkpoint (the evidence record has
#     the exact command) and pass it with --rollback-to, restore a newer savepoint, or make the
#     sink idempotent (upsert with identifier fields).
#   example: |
#     table: {properties: {write.upsert.enabled: "false"}}   # restore from checkpoint 12, table at 20
deny contains f if {
	_rg_plan.behind == true
	not _rg_idempotent
	not _rg_rollback_ok
	rep := _rg_plan.replay
	rep.snapshots > 0
	f := {
		"rule": "SW-REC-002",
		"message": sprintf(
			"restoring checkpoint %v of job %s is behind the table's max committed checkpoint %v: the job replays checkpoints %v..%v (%v commits, %v records, %v data files) and %s, so rows are duplicated; %s%s",
			[
				_rg_plan.checkpoint_id, _rg_plan.job_id, _rg_plan.max_committed_checkpoint_id,
				rep.first_checkpoint_id, rep.last_checkpoint_id, rep.snapshots, rep.added_records,
				rep.added_data_files, _rg_sink_why, _rg_target, _rg_named,
			],
		),
		"path": "table.identifier",
		"source": "savepoint",
		"value": {"job_id": _rg_plan.job_id, "checkpoint_id": _rg_plan.checkpoint_id},
		"evidence": {
			"savepoint": _rg_sp.location,
			"job_id": _rg_plan.job_id,
			"checkpoint_id": _rg_plan.checkpoint_id,
			"max_committed_checkpoint_id": _rg_plan.max_committed_checkpoint_id,
			"rollback_to": object.get(_rg_plan, "matching_snapshot", null),
			"replay": rep,
			"idempotence": object.get(_rg_plan, "idempotence", {}),
			"rollback_target": object.get(_rg_plan, "rollback_target", null),
		},
	}
}

# SW-REC-002: which job took the savepoint cannot be told, and the sink is not idempotent (fail closed)
deny contains f if {
	_rg_plan.status == "unknown"
	_rg_plan.reason_code == "ambiguous_job"
	not _rg_idempotent
	f := {
		"rule": "SW-REC-002",
		"message": sprintf(
			"cannot tell whether restoring checkpoint %v replays committed data: %s; and %s",
			[_rg_plan.checkpoint_id, _rg_plan.reason, _rg_sink_why],
		),
		"path": "table.identifier",
		"source": "savepoint",
		"value": {"job_id": null, "checkpoint_id": _rg_plan.checkpoint_id},
		"evidence": {"savepoint": _rg_sp.location, "reason": _rg_plan.reason},
	}
}
