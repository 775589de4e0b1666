package streamwarden.checkpoint

import rego.v1

# METADATA
# title: Exactly-once sinks need exactly-once checkpoints
# description: |
#   Fires when a sink declares delivery exactly_once while checkpoint.mode is at_least_once:
#   with at-least-once checkpoints, records after a restore can be replayed into the sink and
#   committed twice. One finding on checkpoint.mode names every exactly-once sink. An absent
#   mode is Flink's default (exactly_once) and does not fire.
# custom:
#   id: SW-CKPT-007
#   severity: error
#   remediation: |
#     Set checkpoint.mode (and execution.checkpointing.mode) to exactly_once, or declare the
#     sinks at_least_once if duplicates are acceptable.
#   example: |
#     job: {sinks: [{name: orders-table, delivery: exactly_once}]}
#     checkpoint: {mode: at_least_once}
deny contains f if {
	_ckpt.mode == "at_least_once"
	count(exactly_once_sinks) > 0
	f := {
		"rule": "SW-CKPT-007",
		"message": sprintf(
			"checkpoint.mode is at_least_once but sinks promise exactly_once delivery (%s): a restore can commit records twice; set checkpoint.mode to exactly_once",
			[concat(", ", exactly_once_sinks)],
		),
		"path": "checkpoint.mode",
		"evidence": {"mode": "at_least_once", "exactly_once_sinks": exactly_once_sinks},
	}
}
