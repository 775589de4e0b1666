package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

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
