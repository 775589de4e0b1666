package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

# METADATA
# title: Checkpoints of the running job must not keep failing
# description: |
#   Live Flink facts: fires when the recent checkpoint history (the last entries Flink keeps,
#   10 by default) holds more failed checkpoints than checkpoint.health.max_failed (equal is
#   fine). Checkpoints that failed to trigger count in Flink's total but not in the history;
#   the total is in the evidence.
# custom:
#   id: SW-CKPT-011
#   severity: error
#   remediation: |
#     Read the failure messages in the checkpoint history (timeouts, storage errors, declined
#     checkpoints) and fix the cause; raise the timeout only if checkpoints are slow but healthy.
#   example: |
#     checkpoint: {interval: 60s, health: {max_failed: 3}}
#     # running job: 5 of the last 10 checkpoints failed
deny contains f if {
	max_failed := _ckpt.health.max_failed
	count(_flink_failed) > max_failed
	f := {
		"rule": "SW-CKPT-011",
		"message": sprintf(
			"%s: %d of the last %d checkpoints failed (from %s), more than contract checkpoint.health.max_failed %v%s",
			[_flink_ref, count(_flink_failed), count(_flink_ckpts.history), _flink_stats_source, max_failed, _flink_last_failure],
		),
		"path": "checkpoint.health.max_failed",
		"source": "flink",
		"value": "flink:failed-checkpoints",
		"evidence": {
			"job_id": _flink.job_id,
			"failed_in_history": count(_flink_failed),
			"history": count(_flink_ckpts.history),
			"failed_total": object.get(_flink_ckpts, ["counts", "failed"], null),
			"max_failed": max_failed,
			"failed_ids": [h.id | some h in _flink_failed],
		},
	}
}
