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

test_unavailable_flink_is_quiet if {
	inp := object.union(_tr_input(_tr_cfg, "running"), {"facts": {"flink": {"available": false, "configured": true, "error": "x"}}})
	count(_tr_rules(deny)) == 0 with input as inp
}
