package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

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
