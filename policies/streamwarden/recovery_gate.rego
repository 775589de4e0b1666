# Recovery (SW-REC): the restore side, read from facts.savepoint (the savepoint or retained
# checkpoint to restore) and facts.savepoint.table (the table as of that checkpoint: the matching
# snapshot, the replay window, the sink's idempotence, a named rollback target). Those are facts:
# whether the replay duplicates rows is decided here, by SW-REC-002, and nowhere else. Evaluated in
# `gate` and `evidence`; SW-REC-001/004/005 live in recovery.rego.
package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.savepoint, mode.gate]

_rg_sp := sp if {
	sp := input.facts.savepoint
	sp.available == true
}

_rg_plan := t if {
	t := _rg_sp.table
	is_object(t)
}

_rg_idempotent if object.get(_rg_plan, ["idempotence", "idempotent"], false) == true

_rg_rollback_ok if object.get(_rg_plan, ["rollback_target", "valid"], false) == true

_rg_sink_why := sprintf("the sink is not idempotent (write.upsert.enabled=%v, identifier fields %v, from the %s)", [
	object.get(_rg_plan, ["idempotence", "upsert"], false),
	object.get(_rg_plan, ["idempotence", "identifier_fields"], []),
	object.get(_rg_plan, ["idempotence", "source"], "table"),
])

_rg_target := sprintf("roll the table back to snapshot %v (checkpoint %v) first and name it with --rollback-to %v", [m.snapshot_id, m.checkpoint_id, m.snapshot_id]) if {
	m := _rg_plan.matching_snapshot
	is_object(m)
} else := "no snapshot of the savepoint's checkpoint is left to roll back to: restore a newer savepoint"

_rg_named := sprintf("; the named rollback target %s is not usable: %s", [lib.quote(t.named), t.reason]) if {
	t := _rg_plan.rollback_target
	is_object(t)
	t.valid == false
} else := ""

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

_rg_max_age := input.contract.retention.savepoints.max_age

_rg_stateful if count(object.get(input.contract, ["state", "operators"], [])) > 0

# METADATA
# title: The savepoint to restore must exist and be fresh
# description: |
#   A savepoint older than retention.savepoints.max_age restores state the pipeline promised
#   not to rely on (and the table may no longer hold its snapshots). Fires when the savepoint's
#   completion time (Flink's acknowledgement time when Flink REST names it, else the _metadata
#   file's modification time) is more than retention.savepoints.max_age before now, or unknown;
#   and, in the gate, when a stateful pipeline (state.operators) has no savepoint or retained
#   checkpoint to restore at all (none given with --restore-from and none named by Flink): the
#   job would start with empty state. An unreadable savepoint is SW-FACT-001's.
# custom:
#   id: SW-REC-003
#   severity: error
#   remediation: |
#     Take a fresh savepoint (POST /jobs/:id/savepoints or stop-with-savepoint) and restore from
#     it, or raise retention.savepoints.max_age if the older savepoint is really intended.
#   example: |
#     retention: {savepoints: {max_age: 7d}}   # the savepoint is 9 days old
deny contains f if {
	is_number(_rg_sp.completed_ms)
	age := input.now_ms - _rg_sp.completed_ms
	age > _rg_max_age
	f := {
		"rule": "SW-REC-003",
		"message": sprintf(
			"the %s to restore (%s, checkpoint %v) completed %s ago, older than retention.savepoints.max_age %s",
			[_rg_kind, _rg_sp.location, _rg_sp.checkpoint_id, lib.fmt_age(age), lib.fmt_ms(_rg_max_age)],
		),
		"path": "retention.savepoints.max_age",
		"source": "savepoint",
		"value": _rg_sp.location,
		"evidence": {"savepoint": _rg_sp.location, "completed_ms": _rg_sp.completed_ms, "age_ms": age, "max_age_ms": _rg_max_age},
	}
}

# SW-REC-003: the age cannot be told (fail closed)
deny contains f if {
	is_number(_rg_max_age)
	not is_number(object.get(_rg_sp, "completed_ms", null))
	f := {
		"rule": "SW-REC-003",
		"message": sprintf(
			"the age of %s (checkpoint %v) is unknown: neither Flink nor the storage tells when it completed, so retention.savepoints.max_age %s cannot be checked",
			[_rg_sp.location, _rg_sp.checkpoint_id, lib.fmt_ms(_rg_max_age)],
		),
		"path": "retention.savepoints.max_age",
		"source": "savepoint",
		"value": _rg_sp.location,
		"evidence": {"savepoint": _rg_sp.location, "completed_ms": null},
	}
}

_rg_missing_path := "retention.savepoints.max_age" if {
	is_number(_rg_max_age)
} else := "state.operators"

_rg_kind := k if {
	k := _rg_sp.kind
	is_string(k)
} else := "savepoint"

# SW-REC-003: the gate has nothing to restore a stateful pipeline from
deny contains f if {
	input.mode == "gate"
	_rg_stateful
	object.get(input.facts, ["savepoint", "configured"], false) == false
	f := {
		"rule": "SW-REC-003",
		"message": "no savepoint or retained checkpoint to restore: none was given (--restore-from) and Flink names none; the stateful job would start with empty state",
		"path": _rg_missing_path,
		"source": "savepoint",
		"value": null,
		"evidence": {"savepoint": null},
	}
}

# The Kafka partitions the savepoint resumes for a job.sources[] entry (facts.savepoint.kafka).
_rg_source_partitions(name) := [p |
	some p in object.get(_rg_sp, ["kafka", "partitions"], [])
	p.source == name
]

# "orders[0] at offset 1234, orders[1] at earliest" for the first five, then how many more.
_rg_offsets_text(parts) := "" if {
	count(parts) == 0
} else := sprintf("; it resumes %s%s", [concat(", ", [_rg_offset_text(p) | some p in array.slice(parts, 0, 5)]), _rg_more(parts)])

_rg_offset_text(p) := sprintf("%s[%v] at offset %v", [p.topic, p.partition, p.offset]) if {
	is_number(p.offset)
} else := sprintf("%s[%v] at %s", [p.topic, p.partition, p.position])

_rg_more(parts) := sprintf(" and %d more partitions", [count(parts) - 5]) if count(parts) > 5 else := ""

# The rewindable sources with a declared retention: [index, source, margin, limit].
_rg_kept_sources contains [idx, source, margin, source.retention - margin] if {
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	source.rewindable == true
	is_number(source.retention)
	margin := lib.source_margin(source)
}

# SW-REC-006 (the restore side; METADATA in recovery.rego): the savepoint is older than what a
# rewindable source keeps, less its margin.
deny contains f if {
	is_number(_rg_sp.completed_ms)
	age := input.now_ms - _rg_sp.completed_ms
	some [idx, source, margin, limit] in _rg_kept_sources
	age >= limit
	parts := _rg_source_partitions(object.get(source, "name", null))
	f := lib.finding(
		"SW-REC-006",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"the %s to restore (%s, checkpoint %v) completed %s ago, and %s keeps %s, less %s, is %s: the records after the position it resumes from are older than that and may be deleted already, so the restored job would skip them%s; restore a newer savepoint",
			[
				_rg_kind, _rg_sp.location, _rg_sp.checkpoint_id, lib.fmt_age(age), lib.source_label(source, idx),
				lib.fmt_ms(source.retention), lib.source_margin_text(source), _age_or_none(limit), _rg_offsets_text(parts),
			],
		),
		{
			"savepoint": _rg_sp.location,
			"completed_ms": _rg_sp.completed_ms,
			"age_ms": age,
			"source": object.get(source, "name", null),
			"retention_ms": source.retention,
			"margin_ms": margin,
			"limit_ms": limit,
			"partitions": parts,
		},
		{"source": "savepoint", "value": {"savepoint": _rg_sp.location, "source": object.get(source, "name", null)}},
	)
}

# SW-REC-006: the savepoint's age cannot be told (fail closed)
deny contains f if {
	not is_number(object.get(_rg_sp, "completed_ms", null))
	some [idx, source, margin, limit] in _rg_kept_sources
	f := lib.finding(
		"SW-REC-006",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"the age of %s (checkpoint %v) is unknown: neither Flink nor the storage tells when it completed, so whether %s still keeps what it resumes from (%s, less %s) cannot be checked",
			[_rg_sp.location, _rg_sp.checkpoint_id, lib.source_label(source, idx), lib.fmt_ms(source.retention), lib.source_margin_text(source)],
		),
		{
			"savepoint": _rg_sp.location,
			"completed_ms": null,
			"source": object.get(source, "name", null),
			"retention_ms": source.retention,
			"margin_ms": margin,
			"limit_ms": limit,
			"partitions": _rg_source_partitions(object.get(source, "name", null)),
		},
		{"source": "savepoint", "value": {"savepoint": _rg_sp.location, "source": object.get(source, "name", null)}},
	)
}
