package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

test_ckpt004_file_uris_fire if {
	_t_storage_reason("file:///var/flink/ckpt") == "local_file"
	_t_storage_reason("file:/var/flink/ckpt") == "local_file"
	_t_storage_reason("FILE:///var/flink/ckpt") == "local_file"
}

test_ckpt004_jobmanager_fires if {
	_t_storage_reason("jobmanager") == "jobmanager"
	_t_storage_reason(" JobManager ") == "jobmanager"
}

test_ckpt004_local_paths_fire if {
	_t_storage_reason("/var/flink/ckpt") == "local_path"
	_t_storage_reason("ckpt-dir") == "local_path"
	_t_storage_reason(`C:\flink\ckpt`) == "local_path"
	_t_storage_reason("filesystem") == "local_path"
}

test_ckpt004_message_names_the_storage if {
	findings := deny with input as {"contract": {"checkpoint": {"storage": "file:///var/flink/ckpt"}}}
	some f in findings
	f.rule == "SW-CKPT-004"
	contains(f.message, `checkpoint.storage "file:///var/flink/ckpt" is on the local filesystem`)
	contains(f.message, "s3://")
}

test_ckpt004_durable_uris_pass if {
	not _t_storage_reason("s3://lake-checkpoints/orders")
	not _t_storage_reason("gs://bucket/ckpt")
	not _t_storage_reason("abfs://c@acct.dfs.core.windows.net/ckpt")
	not _t_storage_reason("hdfs:///flink/ckpt")
	not _t_storage_reason("s3a://bucket/ckpt")
}

test_ckpt004_missing_storage_with_checkpointing if {
	inp := lib.contract_without(["checkpoint/storage"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-004"
	f.path == "checkpoint.storage"
	f.evidence == {"storage": null, "reason": "missing", "interval": 60000}
	contains(f.message, "interval 1m")
}

test_ckpt004_blank_storage_is_missing_once if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 60000, "storage": "  "}}}
	ckpt004 := [f | some f in findings; f.rule == "SW-CKPT-004"]
	count(ckpt004) == 1
	ckpt004[0].evidence.reason == "missing"
}

test_ckpt004_missing_storage_without_checkpointing_is_silent if {
	findings := deny with input as {"contract": {"checkpoint": {"mode": "exactly_once"}}}
	lib.no_rule(findings, "SW-CKPT-004")
}
