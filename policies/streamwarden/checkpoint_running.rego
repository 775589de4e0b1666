# Checkpoint contract (SW-CKPT): the running job's side of the rules whose METADATA lives in
# checkpoint.rego (001, 004, 005, 007, 008), read from /jobs/:id/checkpoints/config
# (input.facts.flink.checkpoint_config, docs/facts-flink.md). The retained count (006) is not
# reported by that endpoint, so only the contract and the repository can break it.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

_run_cfg := c if {
	_flink_running
	c := _flink_cfg
}

_run_source := sprintf("%s, %s", [_flink_ref, _run_cfg.source]) if is_string(_run_cfg.source)

else := _flink_ref

# SW-CKPT-001 (running side): the job runs without periodic checkpoints.
deny contains f if {
	cfg := _run_cfg
	cfg.enabled == false
	count(_needs_checkpointing) > 0
	f := {
		"rule": "SW-CKPT-001",
		"message": sprintf(
			"the %s does not checkpoint although %s: a failure loses its state and replays or drops data; enable checkpointing (execution.checkpointing.interval)",
			[_flink_ref, concat(" and ", _needs_checkpointing)],
		),
		"path": "checkpoint.interval",
		"source": "flink",
		"value": "running:disabled",
		"evidence": {"job_id": _flink.job_id, "enabled": false, "from": _run_source},
	}
}

# SW-CKPT-004 (running side): checkpoints kept in JobManager memory.
deny contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	cfg.checkpoint_storage == "JobManagerCheckpointStorage"
	f := {
		"rule": "SW-CKPT-004",
		"message": sprintf(
			"the %s keeps its checkpoints in JobManager memory (JobManagerCheckpointStorage): they are lost with the JobManager; set execution.checkpointing.dir to a durable URI such as s3://",
			[_flink_ref],
		),
		"path": "checkpoint.storage",
		"source": "flink",
		"value": "running:JobManagerCheckpointStorage",
		"evidence": {"job_id": _flink.job_id, "checkpoint_storage": cfg.checkpoint_storage, "from": _run_source},
	}
}

# SW-CKPT-005 (running side): the running job deletes its checkpoints on cancel.
deny contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	window := _rollback_window
	is_string(cfg.externalized)
	cfg.externalized != "retain_on_cancellation"
	f := {
		"rule": "SW-CKPT-005",
		"message": sprintf(
			"the %s runs with externalized checkpoints %s while retention.rollback_window is %s: after a cancel it could not be restored; run it with RETAIN_ON_CANCELLATION",
			[_flink_ref, cfg.externalized, lib.fmt_ms(window)],
		),
		"path": "checkpoint.externalized",
		"source": "flink",
		"value": sprintf("running:%s", [cfg.externalized]),
		"evidence": {"job_id": _flink.job_id, "externalized": cfg.externalized, "rollback_window": window, "from": _run_source},
	}
}

# SW-CKPT-007 (running side): exactly-once sinks behind an at-least-once running job.
deny contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	cfg.mode == "at_least_once"
	count(exactly_once_sinks) > 0
	f := {
		"rule": "SW-CKPT-007",
		"message": sprintf(
			"the %s checkpoints at_least_once but sinks promise exactly_once delivery (%s): a restore can commit records twice",
			[_flink_ref, concat(", ", exactly_once_sinks)],
		),
		"path": "checkpoint.mode",
		"source": "flink",
		"value": "running:at_least_once",
		"evidence": {"job_id": _flink.job_id, "mode": cfg.mode, "exactly_once_sinks": exactly_once_sinks, "from": _run_source},
	}
}

# SW-CKPT-008 (running side): the running job tolerates unlimited checkpoint failures. (A
# running value merely different from the contract is SW-CKPT-003.)
warn contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	n := cfg.tolerable_failures
	is_number(n)
	lib.unlimited_failures(n)
	f := {
		"rule": "SW-CKPT-008",
		"message": sprintf(
			"the %s tolerates unlimited failed checkpoints (%v): checkpoint failures never fail the job and go unnoticed",
			[_flink_ref, n],
		),
		"path": "checkpoint.tolerable_failures",
		"source": "flink",
		"value": "running:unlimited",
		"evidence": {"job_id": _flink.job_id, "tolerable_failures": n, "from": _run_source},
	}
}
