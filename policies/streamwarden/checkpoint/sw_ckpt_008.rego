package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Checkpoint failures must not become silent
# description: |
#   Fires when checkpoint.tolerable_failures is unlimited (negative, such as -1, or
#   2147483647), or, where checkpoint.health.max_failed is declared, above it (equal is fine):
#   the job would keep running through more consecutive checkpoint failures than the health
#   contract tolerates, so failures only show up when someone looks. The repository and live
#   sides compare the deployed value with the contract's tolerable_failures.
# custom:
#   id: SW-CKPT-008
#   severity: warning
#   remediation: |
#     Set checkpoint.tolerable_failures to a small number no larger than
#     checkpoint.health.max_failed, and execution.checkpointing.tolerable-failed-checkpoints
#     to the same value.
#   example: |
#     checkpoint: {interval: 60s, tolerable_failures: -1}
warn contains f if {
	tolerable := _ckpt.tolerable_failures
	is_number(tolerable)
	lib.unlimited_failures(tolerable)
	f := {
		"rule": "SW-CKPT-008",
		"message": sprintf(
			"checkpoint.tolerable_failures is %v (unlimited): checkpoint failures never fail the job and go unnoticed; set a small limit such as 3",
			[tolerable],
		),
		"path": "checkpoint.tolerable_failures",
		"evidence": {"tolerable_failures": tolerable, "unlimited": true},
	}
}

# SW-CKPT-008: above health.max_failed
warn contains f if {
	tolerable := _ckpt.tolerable_failures
	is_number(tolerable)
	not lib.unlimited_failures(tolerable)
	max_failed := _ckpt.health.max_failed
	is_number(max_failed)
	tolerable > max_failed
	f := {
		"rule": "SW-CKPT-008",
		"message": sprintf(
			"checkpoint.tolerable_failures (%v) is above checkpoint.health.max_failed (%v): the job keeps running through more failed checkpoints than the contract tolerates; lower tolerable_failures to %v or less",
			[tolerable, max_failed, max_failed],
		),
		"path": "checkpoint.tolerable_failures",
		"evidence": {"tolerable_failures": tolerable, "max_failed": max_failed},
	}
}
