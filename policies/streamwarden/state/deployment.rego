# State contract (SW-STATE), helpers of the repository side: the effective Flink configuration of
# the files named by job.deployment (input.facts.deployment) against the contract.
package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep
import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

# the parallelism of the configuration v, else the contract's
_dep_parallelism(v) := p if {
	p := v["parallelism.default"].value
	lib.positive(p)
} else := p if {
	p := input.contract.job.parallelism
	lib.positive(p)
} else := null

# What Flink derives when the configuration v leaves the max parallelism unset (-1), for a known parallelism.
_dep_derived(e, v) := lib.derived_max_parallelism(_dep_parallelism(v)) if {
	not lib.positive(e.value)
	_dep_parallelism(v) != null
} else := null

_dep_max_par_message(e, v, want) := sprintf("the max parallelism differs from the contract: the contract pins job.max_parallelism to %v but the repository %s; Flink refuses to restore a savepoint taken with one set max parallelism into a job set to another, so every restore from a savepoint taken with %v breaks; set pipeline.max-parallelism to %v", [want, dep.repo_says(e, "int"), want, want]) if {
	lib.positive(e.value)
} else := sprintf("the max parallelism is not pinned where the job runs: the contract pins job.max_parallelism to %v but the repository %s, so Flink derives one only when the job starts without state (%s) and keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value or when another max parallelism is set later; set pipeline.max-parallelism to %v", [want, dep.repo_says(e, "int"), _dep_derived_text(e, v, want), want])

_dep_derived_text(e, v, want) := sprintf("%v for parallelism %v, the same up to parallelism %v%s", [m, _dep_parallelism(v), lib.derived_up_to(m), _dep_not_want(m, want)]) if {
	m := _dep_derived(e, v)
	m != null
} else := "128 for any parallelism up to 85, more above"

_dep_not_want(m, want) := sprintf(", not the contract's %v", [want]) if m != want else := ""

# Why contract c keeps state across upgrades (SW-STATE-013): its declared state operators, and
# its exactly-once sinks (their committers' pending transactions live in the checkpoint).
_upgrade_state_reasons(c) := [r |
	some r in [_upgrade_operators_reason(c), _upgrade_sinks_reason(c)]
	r != ""
]

_upgrade_operators_reason(c) := sprintf("%d state operator%s under state.operators (%s)", [n, _upgrade_plural(n), concat(", ", uids)]) if {
	ops := object.get(c, ["state", "operators"], [])
	is_array(ops)
	n := count(ops)
	n > 0
	uids := [u | some i, op in ops; u := _upgrade_op_label(op, i)]
} else := ""

_upgrade_op_label(op, i) := op.uid if {
	is_object(op)
	is_string(op.uid)
	not lib.blank(op.uid)
} else := sprintf("state.operators[%d]", [i])

_upgrade_sinks_reason(c) := sprintf("exactly-once sinks (%s), whose pending commits live in the checkpoint", [concat(", ", sinks)]) if {
	sinks := lib.exactly_once_sink_labels(c)
	count(sinks) > 0
} else := ""

_upgrade_plural(n) := "" if n == 1 else := "s"

# The upgrade mode the deployment gives the job, when a Flink Kubernetes Operator resource runs it
# and the mode parsed (an invalid one is SW-DEPLOY-003's; a placeholder is decided at deploy time).
_upgrade_mode := e if {
	dep.available
	e := dep.facts.job.upgrade_mode
	is_string(e.value)
	not e.error
}

_upgrade_mode_says(e) := sprintf("the repository's Flink resource at %s:%v sets no %s, so the Kubernetes operator uses its default, stateless", [e.file, e.line, e.key]) if {
	e.default == true
} else := sprintf("the repository sets %s to stateless at %s:%v", [e.key, e.file, e.line])

# [reasons, where]: the state the head contract keeps, else (in a pull request) the base's.
_upgrade_stateful := [reasons, ""] if {
	reasons := _upgrade_state_reasons(input.contract)
	count(reasons) > 0
} else := [reasons, where] if {
	base := lib.diff_base(_upgrade_base_part)
	reasons := _upgrade_state_reasons(base)
	count(reasons) > 0
	where := sprintf(" in %s, and this pull request removes it from the contract", [lib.diff_base_name(_upgrade_base_part)])
}

# The part of the input the base's helpers read, named as a path: this file is evaluated in every
# static check, and handing the whole input on would count as a possible read of the time for the
# result cache (engine/timeread.py), which would keep its results from being reused.
_upgrade_base_part := {"base": input.base}
