# State contract (SW-STATE), repository side: the effective Flink configuration of the files
# named by job.deployment (input.facts.deployment) against the contract. The METADATA of
# SW-STATE-001, 002 and 004 is in state.rego; SW-STATE-012's is here (it has no contract side).
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
		sprintf("the max parallelism differs from the contract: the contract pins job.max_parallelism to %v but the repository %s; set pipeline.max-parallelism to %v", [want, _dep_max_par_says(e, v), want]),
		{"contract": want, "contract_field": "job.max_parallelism", "auto_max_parallelism": _dep_auto_max_par(e, v)},
	)
}

# the parallelism of the configuration v, else the contract's
_dep_parallelism(v) := p if {
	p := v["parallelism.default"].value
	lib.positive(p)
} else := p if {
	p := input.contract.job.parallelism
	lib.positive(p)
}

_dep_auto_max_par(e, v) := m if {
	e.value == -1
	m := dep.auto_max_parallelism(_dep_parallelism(v))
} else := null

_dep_max_par_says(e, v) := sprintf("%s; Flink then derives it from the parallelism (%v for parallelism %v), so a parallelism change changes it and breaks every restore", [dep.repo_says(e, "int"), _dep_auto_max_par(e, v), _dep_parallelism(v)]) if {
	e.value == -1
	_dep_auto_max_par(e, v) != null
} else := sprintf("%s; Flink then derives it from the parallelism, so a parallelism change changes it and breaks every restore", [dep.repo_says(e, "int")]) if {
	e.value == -1
} else := dep.repo_says(e, "int")

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
