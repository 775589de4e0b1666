package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-CKPT-004 (repository side): checkpoints kept in JobManager memory.
deny contains f if {
	some e in dep.settings("execution.checkpointing.storage")
	e.value == "jobmanager"
	f := dep.finding(
		"SW-CKPT-004", "execution.checkpointing.storage", e,
		sprintf("checkpoint storage is not durable: the repository %s, which keeps checkpoints in JobManager memory that a failover loses; set execution.checkpointing.dir to a durable URI such as s3://, gs://, abfs:// or hdfs://", [dep.repo_says(e, "name")]),
		{"reason": "jobmanager"},
	)
}

# SW-CKPT-004 (repository side): a checkpoint directory on local disk.
deny contains f if {
	some e in dep.settings("execution.checkpointing.dir")
	is_string(e.value)
	reason := dep.nondurable(e.value)
	f := dep.finding(
		"SW-CKPT-004", "execution.checkpointing.dir", e,
		sprintf("checkpoint storage is not durable: the repository %s, %s; use a durable URI such as s3://, gs://, abfs:// or hdfs://", [dep.repo_says(e, "string"), reason]),
		{"reason": reason},
	)
}

# SW-CKPT-004 (repository side): checkpointing on, but no checkpoint directory.
deny contains f if {
	some v in _dep_views
	e := v["execution.checkpointing.dir"]
	e.value == null
	dep.view_checkpointing_on(v)
	count(_dep_reasons) > 0
	v["execution.checkpointing.storage"].value != "jobmanager"
	f := dep.finding(
		"SW-CKPT-004", "execution.checkpointing.dir", e,
		"checkpointing is on in the deployment but execution.checkpointing.dir is not set: Flink then keeps checkpoints in JobManager memory; set it to a durable URI such as s3://, gs://, abfs:// or hdfs://",
		{"reason": "missing"},
	)
}
