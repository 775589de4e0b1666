package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

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
