package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Max parallelism must be pinned
# description: |
#   The max parallelism is the number of key groups keyed state is split into, recorded in every
#   savepoint. When it is set (pipeline.max-parallelism), Flink refuses to restore a savepoint
#   taken with another value. When it is not set, Flink derives one only for a job that starts
#   without state (KeyGroupRangeAssignment: the power of two at or above 1.5 times the
#   parallelism, at least 128 and at most 32768: 128 for any parallelism up to 85, 256 up to
#   171), and a restore keeps the savepoint's value, so a parallelism change alone does not
#   break it. Such a restore breaks when the job is rescaled above the savepoint's max
#   parallelism, or when a max parallelism other than the savepoint's is set later; and the
#   value a fresh start gets depends on the parallelism it happens to start with. Fires when
#   job.max_parallelism is absent or not positive. The repository side fires when the
#   deployment's pipeline.max-parallelism is not the contract's: set to another value (every
#   restore from a savepoint taken with the contract's breaks), or left unset (-1: derived, as
#   above).
# custom:
#   id: SW-STATE-004
#   severity: error
#   remediation: |
#     Declare job.max_parallelism (for example 128, at least the largest parallelism you will
#     ever run; for a job that already runs without one, the max parallelism its savepoints
#     carry, which `streamwarden savepoint inspect` shows) and set pipeline.max-parallelism to
#     the same value; never change it afterwards.
#   example: |
#     job: {name: orders-enrichment, parallelism: 4}   # no max_parallelism
deny contains f if {
	job := object.get(input.contract, "job", {})
	max_par := object.get(job, "max_parallelism", null)
	not lib.positive(max_par)
	f := {
		"rule": "SW-STATE-004",
		"message": sprintf(
			"job.max_parallelism is %s: Flink then derives the max parallelism (the number of key groups) only when the job starts without state (%s) and keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value or when another max parallelism is set later; declare it (for example 128, or the value the job's savepoints carry) and set pipeline.max-parallelism to the same value",
			[_max_par_text(max_par), _derived_text],
		),
		"path": "job.max_parallelism",
		"evidence": {
			"max_parallelism": max_par,
			"parallelism": _job_parallelism,
			"derived_max_parallelism": _job_derived,
		},
	}
}
