package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# METADATA
# title: Checkpoints of the running job must be fast enough
# description: |
#   Live Flink facts: fires when a recent completed checkpoint (the history Flink keeps, and
#   the latest completed one) took longer end to end than checkpoint.health.max_duration, or
#   longer than half of the checkpoint timeout (the contract's, else the running job's): at that
#   pace a slightly slower checkpoint is aborted. One finding names the slowest checkpoint and
#   the tightest bound it broke.
# custom:
#   id: SW-CKPT-012
#   severity: warning
#   remediation: |
#     Look for backpressure and large state: enable unaligned or incremental checkpoints, give
#     the sink more parallelism, or raise the timeout and health.max_duration if the pace is
#     expected.
#   example: |
#     checkpoint: {interval: 60s, timeout: 10m, health: {max_duration: 60s}}
#     # running job: the last checkpoint took 4 minutes
warn contains f if {
	e := _flink_slowest
	broken := [b | some b in _flink_bounds; e.end_to_end_duration > b.limit]
	count(broken) > 0
	tightest := min({b.limit | some b in broken})
	path := min({b.path | some b in broken; b.limit == tightest})
	some b in broken
	b.path == path
	f := {
		"rule": "SW-CKPT-012",
		"message": sprintf(
			"%s: checkpoint #%v took %s end to end (from %s), longer than %s",
			[_flink_ref, e.id, lib.fmt_ms(e.end_to_end_duration), _flink_stats_source, b.text],
		),
		"path": b.path,
		"source": "flink",
		"value": "flink:slow-checkpoint",
		"evidence": {
			"job_id": _flink.job_id,
			"checkpoint_id": e.id,
			"duration": e.end_to_end_duration,
			"limit": b.limit,
			"slow": count([x | some x in _flink_completed; x.end_to_end_duration > b.limit]),
		},
	}
}
