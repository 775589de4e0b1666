package streamwarden.checkpoint

import rego.v1

_tr_cfg := {
	"available": true, "enabled": true, "mode": "exactly_once", "interval": 60000, "timeout": 600000,
	"min_pause": 30000, "max_concurrent": 1, "unaligned": false, "tolerable_failures": 3,
	"externalized": "retain_on_cancellation", "checkpoint_storage": "FileSystemCheckpointStorage",
	"source": "/jobs/abcdef0123456789/checkpoints/config",
}

_tr_contract := {
	"job": {"name": "orders", "sinks": [{"name": "orders-table", "delivery": "exactly_once"}]},
	"state": {"operators": [{"uid": "dedup", "kind": "keyed"}]},
	"checkpoint": {
		"mode": "exactly_once", "interval": 60000, "timeout": 600000, "min_pause": 30000,
		"max_concurrent": 1, "unaligned": false, "tolerable_failures": 3,
		"externalized": "retain_on_cancellation", "storage": "s3://b/c", "num_retained": 3,
	},
	"retention": {"rollback_window": 259200000},
}

_tr_input(cfg, state) := {
	"contract": _tr_contract,
	"now_ms": 1000,
	"facts": {"flink": {
		"available": true, "job_found": true, "job_name": "orders", "job_id": "abcdef0123456789",
		"job": {"available": true, "state": state, "now": 1000},
		"checkpoint_config": cfg,
	}},
}

_tr_rules(fs) := {f.rule | some f in fs; f.source == "flink"}

test_running_job_matching_the_contract_is_quiet if {
	inp := _tr_input(_tr_cfg, "running")
	count(_tr_rules(deny) & {"SW-CKPT-001", "SW-CKPT-004", "SW-CKPT-005", "SW-CKPT-007"}) == 0 with input as inp
	count(_tr_rules(warn)) == 0 with input as inp
}

test_running_without_checkpoints_fires_001 if {
	inp := _tr_input(object.union(_tr_cfg, {"enabled": false, "interval": null}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-001"
	f.source == "flink"
	contains(f.message, "does not checkpoint")
}

test_finished_job_without_checkpoints_is_not_running if {
	inp := _tr_input(object.union(_tr_cfg, {"enabled": false}), "finished")
	not "SW-CKPT-001" in _tr_rules(deny) with input as inp
}

test_stateless_pipeline_without_checkpoints_is_fine if {
	inp := object.union(
		_tr_input(object.union(_tr_cfg, {"enabled": false}), "running"),
		{"contract": {"state": {"operators": []}, "job": {"sinks": [{"name": "s", "delivery": "at_least_once"}]}}},
	)
	not "SW-CKPT-001" in _tr_rules(deny) with input as inp
}

test_jobmanager_storage_fires_004 if {
	inp := _tr_input(object.union(_tr_cfg, {"checkpoint_storage": "JobManagerCheckpointStorage"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-004"
	f.path == "checkpoint.storage"
}

test_delete_on_cancellation_with_rollback_window_fires_005 if {
	inp := _tr_input(object.union(_tr_cfg, {"externalized": "delete_on_cancellation"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-005"
	contains(f.message, "delete_on_cancellation")
}

test_no_rollback_window_no_005 if {
	base := _tr_input(object.union(_tr_cfg, {"externalized": "none"}), "running")
	inp := json.patch(base, [{"op": "remove", "path": "/contract/retention"}])
	not "SW-CKPT-005" in _tr_rules(deny) with input as inp
}

test_at_least_once_running_with_exactly_once_sink_fires_007 if {
	inp := _tr_input(object.union(_tr_cfg, {"mode": "at_least_once"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-007"
	contains(f.message, "orders-table")
}

test_unlimited_tolerable_failures_warns_008 if {
	inp := _tr_input(object.union(_tr_cfg, {"tolerable_failures": 2147483647}), "running")
	some f in warn with input as inp
	f.rule == "SW-CKPT-008"
	f.source == "flink"
}

test_message_names_the_source_endpoint if {
	inp := _tr_input(object.union(_tr_cfg, {"mode": "at_least_once"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-007"
	contains(f.evidence.from, "/checkpoints/config")
}

test_unavailable_flink_is_quiet if {
	inp := object.union(_tr_input(_tr_cfg, "running"), {"facts": {"flink": {"available": false, "configured": true, "error": "x"}}})
	count(_tr_rules(deny)) == 0 with input as inp
}
