package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# METADATA
# title: The running job must checkpoint on time
# description: |
#   Live Flink facts: fires when the job is RUNNING and its latest completed checkpoint
#   completed longer ago than checkpoint.health.max_age, or when no checkpoint has completed
#   although the job has run longer than health.max_age plus the checkpoint timeout (the
#   contract's checkpoint.timeout, else the running job's). Age is measured on the cluster's
#   clock when the facts were read. A job that is not running is SW-CKPT-013's.
# custom:
#   id: SW-CKPT-010
#   severity: error
#   remediation: |
#     Find why checkpoints stall (backpressure, a slow sink, failing checkpoints: see the
#     exception history and checkpoint history in the Flink UI) and fix it; until a checkpoint
#     completes, a failure replays everything since the last one.
#   example: |
#     checkpoint: {interval: 60s, health: {max_age: 5m}}
#     # running job: latest completed checkpoint 40 minutes ago
deny contains f if {
	_flink_running
	max_age := _ckpt.health.max_age
	latest := _flink_ckpts.latest.completed
	is_number(latest.latest_ack_timestamp)
	age := _flink_now - latest.latest_ack_timestamp
	age > max_age
	f := {
		"rule": "SW-CKPT-010",
		"message": sprintf(
			"%s: the latest completed checkpoint (#%v, from %s) completed %s ago, older than contract checkpoint.health.max_age %s; checkpoints are stalling",
			[_flink_ref, latest.id, _flink_stats_source, lib.fmt_age(age), lib.fmt_ms(max_age)],
		),
		"path": "checkpoint.health.max_age",
		"source": "flink",
		"value": "flink:stale-checkpoint",
		"evidence": {
			"job_id": _flink.job_id,
			"checkpoint_id": latest.id,
			"completed_at": latest.latest_ack_timestamp,
			"age": age,
			"max_age": max_age,
			"failed": object.get(_flink_ckpts, ["counts", "failed"], null),
		},
	}
}

# SW-CKPT-010: no checkpoint completed although the job has run long enough
deny contains f if {
	_flink_running
	max_age := _ckpt.health.max_age
	not is_object(_flink_ckpts.latest.completed)
	started := _flink.job.start_time
	is_number(started)
	ran := _flink_now - started
	ran > max_age + _flink_timeout
	f := {
		"rule": "SW-CKPT-010",
		"message": sprintf(
			"%s has run for %s without completing a checkpoint (%v failed, from %s); contract checkpoint.health.max_age %s plus %s %s have passed",
			[
				_flink_ref, lib.fmt_ms(ran), object.get(_flink_ckpts, ["counts", "failed"], 0),
				_flink_stats_source, lib.fmt_ms(max_age), _flink_timeout_origin, lib.fmt_ms(_flink_timeout),
			],
		),
		"path": "checkpoint.health.max_age",
		"source": "flink",
		"value": "flink:no-checkpoint",
		"evidence": {
			"job_id": _flink.job_id,
			"running_for": ran,
			"max_age": max_age,
			"timeout": _flink_timeout,
			"failed": object.get(_flink_ckpts, ["counts", "failed"], null),
		},
	}
}
