# State contract (SW-STATE), repository side: the effective Flink configuration of the files
# named by job.deployment (input.facts.deployment) against the contract. The METADATA of
# SW-STATE-001, 002 and 004 is in state.rego; SW-STATE-012's and 013's are here (they have no
# contract-only side).
package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep
import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-STATE-001 (repository side): uids must not be generated, but the deployment allows it.
deny contains f if {
	input.contract.state.auto_generated_uids == "forbidden"
	some e in dep.settings("pipeline.auto-generate-uids")
	e.value != false
	f := dep.finding(
		"SW-STATE-001", "pipeline.auto-generate-uids", e,
		sprintf("the contract forbids generated operator uids (state.auto_generated_uids: forbidden) but the repository %s, so an operator without a uid silently gets a generated one; set pipeline.auto-generate-uids to false", [dep.repo_says(e, "bool")]),
		{"auto_generated_uids": "forbidden"},
	)
}

# SW-STATE-002 (repository side): large state on the heap backend. Where the contract names a
# different backend, SW-DEPLOY-005 reports the mismatch instead.
warn contains f if {
	max_size := input.contract.state.max_size
	is_number(max_size)
	max_size > hashmap_max_bytes
	some e in dep.settings("state.backend.type")
	dep.backend_family(e.value) == "hashmap"
	object.get(input.contract.state, "backend", "hashmap") == "hashmap"
	f := dep.finding(
		"SW-STATE-002", "state.backend.type", e,
		sprintf("state.max_size is %s but the repository %s: heap state above %s makes checkpoints and GC pauses slow; use rocksdb with incremental checkpoints", [lib.fmt_bytes(max_size), dep.repo_says(e, "name"), lib.fmt_bytes(hashmap_max_bytes)]),
		{"max_size": max_size, "limit": hashmap_max_bytes},
	)
}

# SW-STATE-002 (repository side): rocksdb/forst without incremental checkpoints.
warn contains f if {
	is_object(input.contract.state)
	some v in data.streamwarden.deployment.views
	backend := v["state.backend.type"]
	backend.value in {"rocksdb", "forst"}
	e := v["execution.checkpointing.incremental"]
	e.value == false
	f := dep.finding(
		"SW-STATE-002", "execution.checkpointing.incremental", e,
		sprintf("the deployment uses the %s backend (%s) but the repository %s: every checkpoint uploads the full state; set execution.checkpointing.incremental to true", [backend.value, dep.origin(backend), dep.repo_says(e, "bool")]),
		{"backend": backend.value},
	)
}

# SW-STATE-004 (repository side): the deployment's max parallelism is not the contract's.
deny contains f if {
	want := input.contract.job.max_parallelism
	lib.positive(want)
	some v in data.streamwarden.deployment.views
	e := v["pipeline.max-parallelism"]
	e.value != want
	f := dep.finding(
		"SW-STATE-004", "pipeline.max-parallelism", e,
		_dep_max_par_message(e, v, want),
		{
			"contract": want, "contract_field": "job.max_parallelism",
			"parallelism": _dep_parallelism(v), "derived_max_parallelism": _dep_derived(e, v),
		},
	)
}

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

# METADATA
# title: The deployment must not drop state the contract keeps
# description: |
#   Fires when the deployment sets execution.state-recovery.ignore-unclaimed-state (or its 1.x
#   name execution.savepoint.ignore-unclaimed-state, or a Flink Kubernetes Operator CR's
#   spec.job.allowNonRestoredState) to true while the contract does not allow it
#   (state.allow_non_restored_state false, or absent in a declared state section: Flink's default
#   is false). With it, a restore silently drops the state of every operator the savepoint has
#   and the job no longer declares.
# custom:
#   id: SW-STATE-012
#   severity: error
#   remediation: |
#     Remove allowNonRestoredState / ignore-unclaimed-state from the deployment, or, for a
#     deliberate state drop, list the operators under state.dropped and set
#     state.allow_non_restored_state to true for that deploy.
#   example: |
#     state: {allow_non_restored_state: false}        # contract
#     job: {allowNonRestoredState: true}               # FlinkDeployment spec
deny contains f if {
	is_object(input.contract.state)
	object.get(input.contract.state, "allow_non_restored_state", false) != true
	some e in dep.settings("execution.state-recovery.ignore-unclaimed-state")
	e.value == true
	f := dep.finding(
		"SW-STATE-012", "execution.state-recovery.ignore-unclaimed-state", e,
		sprintf("the repository %s, so a restore silently drops state the job no longer claims, but the contract does not allow it (state.allow_non_restored_state is %v); remove it, or declare the dropped operators under state.dropped with allow_non_restored_state: true", [dep.repo_says(e, "bool"), object.get(input.contract.state, "allow_non_restored_state", "not set")]),
		{"allow_non_restored_state": object.get(input.contract.state, "allow_non_restored_state", null)},
	)
}

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

# METADATA
# title: A stateful pipeline must not be deployed stateless
# description: |
#   With upgradeMode stateless (the Flink Kubernetes Operator's default when a FlinkDeployment's
#   or FlinkSessionJob's spec.job sets none) the operator upgrades the job by cancelling it and
#   starting it again from empty state: no savepoint or checkpoint is restored, so keyed state,
#   operator state and the pending commits of an exactly-once sink are thrown away on every
#   change of the resource. Fires when the deployment files' Flink resource runs the job with
#   upgradeMode stateless (written, or left unset) while the contract keeps state: it declares
#   state operators (state.operators), or a sink with delivery exactly_once. In a pull request
#   it also fires when the base contract keeps state and the head contract no longer declares it
#   (the running job still holds it). Silent when the deployment names no operator resource with
#   a job (a config.yaml or SQL alone has no upgrade mode). One finding, at the upgradeMode line
#   (or the spec.job line when it is unset).
# custom:
#   id: SW-STATE-013
#   kind: diff
#   severity: error
#   remediation: |
#     Set spec.job.upgradeMode to savepoint (or last-state) so the operator takes a savepoint
#     and restores it on every upgrade. To start over from empty state on purpose, do it as a
#     separate, reviewed change (a waiver on the base branch says who approved it).
#   example: |
#     # contract: state.operators [{uid: orders-dedup, ...}], a sink with delivery: exactly_once
#     # FlinkDeployment:
#     job:
#       upgradeMode: stateless
deny contains f if {
	e := _upgrade_mode
	e.value == "stateless"
	[reasons, where] := _upgrade_stateful
	f := lib.finding(
		"SW-STATE-013", e.key,
		sprintf("%s: on every upgrade the operator starts the job from empty state and restores nothing, but the pipeline keeps state%s: %s; set upgradeMode to savepoint (or last-state)", [_upgrade_mode_says(e), where, concat("; ", reasons)]),
		{"upgrade_mode": "stateless", "operator_default": e.default, "keeps_state": reasons, "deployment_source": sprintf("%s:%v (%s)", [e.file, e.line, e.key])},
		{"source": "deployment", "file": e.file, "line": e.line, "value": "stateless"},
	)
}

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
