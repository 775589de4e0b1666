package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

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
