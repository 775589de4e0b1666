# State contract (SW-STATE): the savepoint side, read from facts.savepoint (the savepoint or
# retained checkpoint to restore: `gate` and `evidence`). facts.savepoint.operators[] carry the
# operator id, the uid/name recorded in the metadata (v5+), parallelism, max parallelism, whether
# the operator holds state as Flink defines it, and the declared uid that hashes to its id
# ("matched") or, when none does, the closest declared uid ("closest", "candidates").
package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.savepoint]

_sp := sp if {
	sp := input.facts.savepoint
	sp.available == true
}

# Flink refuses a restore with unclaimed state unless allowNonRestoredState (default false).
_sp_skips_unclaimed if object.get(input.contract, ["state", "allow_non_restored_state"], false) == true

_sp_what := sprintf("%s %s (checkpoint %v)", [object.get(_sp, "kind", "savepoint"), _sp.location, _sp.checkpoint_id]) if {
	is_string(object.get(_sp, "kind", null))
} else := sprintf("savepoint %s (checkpoint %v)", [_sp.location, _sp.checkpoint_id])

_sp_recorded(op) := sprintf(" (uid %s)", [lib.quote(op.uid)]) if {
	is_string(op.uid)
} else := sprintf(" (name %s)", [lib.quote(op.name)]) if {
	is_string(op.name)
} else := ""

_sp_closest(op) := sprintf("; closest declared uid: %s at %s (edit distance %v)", [lib.quote(op.closest.uid), op.closest.path, op.closest.distance]) if {
	is_number(op.closest.distance)
} else := sprintf("; declared uids with no state in the savepoint: %s", [concat(", ", [sprintf("%s at %s", [lib.quote(c.uid), c.path]) | some c in op.candidates])]) if {
	count(object.get(op, "candidates", [])) > 0
} else := "; no declared uid is a candidate: declare this operator's uid (or its restores_from)"

_sp_path(op) := op.closest.path if {
	is_string(op.closest.path)
} else := "state.operators"

# METADATA
# title: Every operator with state in the savepoint must be claimed by a declared uid
# description: |
#   Flink maps savepoint state to operators by id (the murmur3 hash of the uid); state that no
#   operator of the new job claims makes the restore fail ("Cannot map checkpoint/savepoint state
#   for operator ...") unless allowNonRestoredState is set. Fires for each operator of the
#   savepoint that holds state as Flink defines it (non-empty subtask state or coordinator state)
#   whose id no declared uid hashes to - declared uids are state.operators[].uid, their
#   restores_from, job.sources[].uid and job.sinks[].uid (with the uids the sink's connector
#   derives: <uid>-committer, Sink Committer: <uid>, ...) - while
#   state.allow_non_restored_state is not true. Names the operator id, its recorded uid or name
#   (metadata v5+) and the closest declared uid (edit distance to the recorded uid; without one,
#   the declared uids whose state the savepoint lacks). Operators without state never fire.
# custom:
#   id: SW-STATE-009
#   severity: error
#   remediation: |
#     Give the operator its old uid back, or declare restores_from with the old uid on the operator
#     that takes the state over (setUidHash in the job); if the state may go, list the uid in
#     state.dropped and set allow_non_restored_state for this deploy.
#   example: |
#     state:
#       operators: [{uid: orders-dedupe, kind: keyed}]   # savepoint holds state of uid orders-dedup
deny contains f if {
	not _sp_skips_unclaimed
	some op in _sp.operators
	op.has_state == true
	object.get(op, "matched", null) == null
	f := {
		"rule": "SW-STATE-009",
		"message": sprintf(
			"%s holds state for operator %s%s that no declared uid hashes to: Flink would refuse the restore (state.allow_non_restored_state is false)%s",
			[_sp_what, op.operator_id, _sp_recorded(op), _sp_closest(op)],
		),
		"path": _sp_path(op),
		"source": "savepoint",
		"value": op.operator_id,
		"evidence": {
			"savepoint": _sp.location,
			"checkpoint_id": _sp.checkpoint_id,
			"operator_id": op.operator_id,
			"uid": op.uid,
			"name": op.name,
			"state_size": op.state_size,
			"closest": object.get(op, "closest", null),
			"candidates": object.get(op, "candidates", []),
		},
	}
}

# An operator a connector pins to max parallelism 1 (the Iceberg committer, setMaxParallelism(1))
# holds no keyed state: Flink compares it with its own pinned value, not the job's.
_sp_pinned_singleton(op) if {
	op.max_parallelism == 1
	op.keyed == false
}

# METADATA
# title: The savepoint's max parallelism must equal job.max_parallelism
# description: |
#   Max parallelism is the number of key groups; keyed state cannot be remapped to another count
#   and Flink refuses the restore ("Max parallelism mismatch between checkpoint/savepoint state and
#   new program"). Fires for each operator of the savepoint that holds state and that a declared
#   uid claims (it will exist in the new job) whose max parallelism differs from
#   job.max_parallelism. Silent when job.max_parallelism is not declared (SW-STATE-004 reports
#   that), and for operators pinned by their connector to max parallelism 1 without keyed state
#   (the Iceberg committer).
# custom:
#   id: SW-STATE-010
#   severity: error
#   remediation: |
#     Restore with the max parallelism the savepoint was taken with (set job.max_parallelism and
#     pipeline.max-parallelism back), or migrate the state offline (State Processor API).
#   example: |
#     job: {max_parallelism: 256}   # the savepoint was taken with 128
deny contains f if {
	mp := input.contract.job.max_parallelism
	some op in _sp.operators
	op.has_state == true
	object.get(op, "matched", null) != null
	op.max_parallelism != mp
	not _sp_pinned_singleton(op)
	f := {
		"rule": "SW-STATE-010",
		"message": sprintf(
			"%s has operator %s%s with max parallelism %v, but job.max_parallelism is %v: Flink cannot map its key groups and refuses the restore",
			[_sp_what, op.operator_id, _sp_recorded(op), op.max_parallelism, mp],
		),
		"path": "job.max_parallelism",
		"source": "savepoint",
		"value": {"operator_id": op.operator_id, "savepoint": op.max_parallelism, "contract": mp},
		"evidence": {
			"savepoint": _sp.location,
			"operator_id": op.operator_id,
			"uid": object.get(op.matched, "uid", null),
			"savepoint_max_parallelism": op.max_parallelism,
			"contract_max_parallelism": mp,
		},
	}
}
