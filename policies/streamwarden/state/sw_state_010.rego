package streamwarden.state

import rego.v1

# METADATA
# custom:
#   requires: [facts.savepoint]

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
