package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Max parallelism must not change
# description: |
#   The max parallelism fixes the number of key groups the keyed state is split into; a
#   savepoint taken with one value cannot be restored with another ("Max parallelism mismatch
#   between checkpoint/savepoint state and new program"). Fires when job.max_parallelism
#   differs between the base and head contracts, including when it is set on one side only:
#   set where the base had none, a restore breaks unless the value is the one Flink derived
#   when the job first started without state (the savepoints carry it); unset where the base
#   pinned one, a restore keeps the savepoint's value, but the pin is gone (SW-STATE-004).
# custom:
#   id: SW-STATE-007
#   kind: diff
#   severity: error
#   remediation: |
#     Keep job.max_parallelism (and pipeline.max-parallelism) at the base value. Changing it
#     needs a state migration (State Processor API) or a fresh start without state.
#   example: |
#     # base: job: {max_parallelism: 128}
#     job: {max_parallelism: 256}
deny contains f if {
	lib.diff_base(input)
	old := object.get(lib.diff_base(input), ["job", "max_parallelism"], null)
	new := object.get(_diff_head, ["job", "max_parallelism"], null)
	old != new
	f := {
		"rule": "SW-STATE-007",
		"message": sprintf(
			"job.max_parallelism changes from %s in %s to %s: %s; keep %s",
			[_diff_max_par_text(old), lib.diff_base_name(input), _diff_max_par_text(new), _diff_max_par_why(old, new), _diff_max_par_text(old)],
		),
		"path": "job.max_parallelism",
		"value": new,
		"evidence": {"base": old, "head": new},
	}
}
