package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Checkpoint storage must be durable
# description: |
#   Checkpoints must survive the loss of any machine. Fires on checkpoint.storage that is a
#   file:// or file:/ URI, "jobmanager" (JobManager heap), or a path without a URI scheme
#   (/var/flink/ckpt, ckpt-dir: local disk); and on a missing storage while checkpointing is
#   configured (a positive interval), since Flink then keeps checkpoints in JobManager memory.
#   The repository and live sides check the effective execution.checkpointing.dir and storage.
# custom:
#   id: SW-CKPT-004
#   severity: error
#   remediation: |
#     Point checkpoint.storage (and execution.checkpointing.dir) at a durable, shared file
#     system such as s3://bucket/path, gs://, abfs:// or hdfs://.
#   example: |
#     checkpoint: {interval: 60s, storage: "file:///var/flink/ckpt"}
deny contains f if {
	storage := _ckpt.storage
	is_string(storage)
	not lib.blank(storage)
	reason := nondurable_storage(storage)
	f := {
		"rule": "SW-CKPT-004",
		"message": sprintf("checkpoint.storage %q %s; %s", [storage, _storage_messages[reason], _durable_hint]),
		"path": "checkpoint.storage",
		"evidence": {"storage": storage, "reason": reason},
	}
}

# SW-CKPT-004: storage missing while checkpointing is configured
deny contains f if {
	_interval_set
	lib.blank(object.get(_ckpt, "storage", null))
	f := {
		"rule": "SW-CKPT-004",
		"message": sprintf(
			"checkpointing is on (interval %s) but checkpoint.storage is not set: Flink then keeps checkpoints in JobManager memory; %s",
			[lib.fmt_ms(_ckpt.interval), _durable_hint],
		),
		"path": "checkpoint.storage",
		"evidence": {"storage": object.get(_ckpt, "storage", null), "reason": "missing", "interval": _ckpt.interval},
	}
}
