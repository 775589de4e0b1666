# State contract (SW-STATE): the live side, read from the Flink REST facts
# (input.facts.flink, documented in docs/facts-flink.md). Sizes are bytes on both sides.
package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# METADATA
# title: Live state must stay within the declared size
# description: |
#   Live Flink facts: fires when the full state size of the job's latest completed checkpoint
#   (state_size in the checkpoint statistics, else the lastCheckpointFullSize metric) is above
#   state.max_size (equal is fine). State beyond the size the contract was designed for makes
#   checkpoints, restores and rescaling slower than planned.
# custom:
#   id: SW-STATE-011
#   severity: warning
#   remediation: |
#     Find the state that grows (a missing TTL, an unbounded key space) and bound it, or raise
#     state.max_size after checking the backend and checkpoint timeout can take it.
#   example: |
#     state: {backend: rocksdb, max_size: 10GiB}
#     # running job: latest checkpoint holds 14 GiB of state
warn contains f if {
	max_size := _state.max_size
	is_number(max_size)
	found := _flink_state_size
	found.size > max_size
	f := {
		"rule": "SW-STATE-011",
		"message": sprintf(
			"%s: %s holds %s of state (from %s), above contract state.max_size %s",
			[
				lib.flink_job_ref(_flink_job),
				_flink_checkpoint_text(found.checkpoint), lib.fmt_size(found.size), found.from, lib.fmt_bytes(max_size),
			],
		),
		"path": "state.max_size",
		"source": "flink",
		"value": "flink:state-size",
		"evidence": {
			"job_id": _flink_job.job_id,
			"checkpoint_id": found.checkpoint,
			"state_size": found.size,
			"max_size": max_size,
		},
	}
}

_flink_job := lib.flink_job(input.facts.flink)

# The full state size of the latest completed checkpoint, and where it came from: the
# checkpoint statistics, else the lastCheckpointFullSize job metric.
_flink_state_size := {"size": s, "checkpoint": e.id, "from": sprintf("/jobs/%s/checkpoints", [_flink_job.job_id])} if {
	_flink_job.checkpoints.available == true
	e := _flink_job.checkpoints.latest.completed
	s := e.state_size
	is_number(s)
} else := {"size": s, "checkpoint": null, "from": "the lastCheckpointFullSize job metric"} if {
	_flink_job.metrics.available == true
	s := _flink_job.metrics.values.lastCheckpointFullSize
	is_number(s)
}

_flink_checkpoint_text(id) := sprintf("checkpoint #%v", [id]) if {
	id != null
} else := "the latest checkpoint"
