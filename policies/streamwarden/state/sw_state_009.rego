package streamwarden.state

import rego.v1

# METADATA
# custom:
#   requires: [facts.savepoint]

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
