package streamwarden.checkpoint

import rego.v1

# METADATA
# title: Stateful or exactly-once pipelines must checkpoint
# description: |
#   Fires when the pipeline keeps state (state.operators is not empty) or has a sink with
#   delivery exactly_once, and checkpointing is disabled: checkpoint.interval is absent (or the
#   whole checkpoint section is), or not positive. Without checkpoints, a restart loses all state
#   and the Iceberg sink never commits (it commits on checkpoint), so exactly-once is impossible.
#   The repository and live sides report a deployment whose effective interval is unset.
# custom:
#   id: SW-CKPT-001
#   severity: error
#   remediation: |
#     Declare checkpoint.interval (for example 60s) in the contract and set
#     execution.checkpointing.interval to the same value in the deployment.
#   example: |
#     state: {operators: [{uid: dedup, kind: keyed, ttl: 24h}]}
#     checkpoint: {mode: exactly_once}   # no interval: checkpointing is off
deny contains f if {
	not _interval_set # first: the reasons are messages, built only for a contract without an interval
	count(_needs_checkpointing) > 0
	f := {
		"rule": "SW-CKPT-001",
		"message": sprintf(
			"checkpointing is disabled (checkpoint.interval is %s) but %s; declare a positive checkpoint.interval such as 60s",
			[_interval_text, concat(" and ", _needs_checkpointing)],
		),
		"path": "checkpoint.interval",
		"evidence": {
			"interval": object.get(_ckpt, "interval", null),
			"state_operators": count(_state_operators),
			"exactly_once_sinks": exactly_once_sinks,
		},
	}
}
