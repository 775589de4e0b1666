package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.savepoint, mode.gate]

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
