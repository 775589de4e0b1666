package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures: a healthy running job

_ft_now := 1795640942263

_ft_jid := "4d986ca01ddda5a426cdee76cc7caaf6"

_ft_entry(id, status, duration) := {
	"id": id,
	"status": status,
	"is_savepoint": false,
	"checkpoint_type": "checkpoint",
	"trigger_timestamp": ((_ft_now - 30000) - ((41 - id) * 60000)) - duration,
	"latest_ack_timestamp": (_ft_now - 30000) - ((41 - id) * 60000),
	"end_to_end_duration": duration,
	"state_size": 34015,
	"checkpointed_size": 29046,
	"num_subtasks": 2,
	"num_acknowledged_subtasks": 2,
}

_ft_history := [_ft_entry(id, "completed", 2000) | some i in numbers.range(0, 9); id := 41 - i]

_ft_flink := {
	"available": true,
	"configured": true,
	"rest_url": "http://flink.test:8081",
	"flink_version": "2.3.0",
	"job_name": "orders-enrichment",
	"job_found": true,
	"job_id": _ft_jid,
	"job_ids": [_ft_jid],
	"duplicates": [],
	"job": {
		"available": true,
		"id": _ft_jid,
		"name": "orders-enrichment",
		"state": "running",
		"start_time": _ft_now - 3600000,
		"end_time": null,
		"now": _ft_now,
		"vertices": [],
	},
	"checkpoint_config": {
		"available": true,
		"enabled": true,
		"mode": "exactly_once",
		"interval": 60000,
		"timeout": 600000,
		"min_pause": 30000,
		"max_concurrent": 1,
		"unaligned": false,
		"tolerable_failures": 3,
		"externalized": "retain_on_cancellation",
		"source": sprintf("/jobs/%s/checkpoints/config", [_ft_jid]),
	},
	"checkpoints": {
		"available": true,
		"counts": {"total": 41, "completed": 41, "failed": 0, "in_progress": 0, "restored": 0},
		"latest": {"completed": _ft_history[0], "savepoint": null, "failed": null, "restored": null},
		"history": _ft_history,
	},
	"exceptions": {"available": true, "entries": [], "truncated": false},
	"metrics": {"available": true, "values": {"numRestarts": 0}},
	"restarts": 0,
	"restarts_source": "metrics.numRestarts",
}

# An input around the example contract (deep-merged with `contract_patch`) and flink facts.
_ft_input(contract_patch, flink) := {
	"contract": object.union(lib.example_contract, contract_patch),
	"facts": object.union(lib.example_input.facts, {"flink": flink}),
	"now_ms": 1764000000000,
	"environment": "prod",
}

_ft_flink_with(patch) := object.union(_ft_flink, patch)

_ft_checkpoints_with(patch) := object.union(_ft_flink, {"checkpoints": object.union(_ft_flink.checkpoints, patch)})

_ft_findings(inp) := {f | some f in deny with input as inp} | {f | some f in warn with input as inp}

# ---------------------------------------------------------------- the healthy job passes

test_flink_matching_running_job_gives_no_finding if {
	inp := _ft_input({}, _ft_flink)
	count(_ft_findings(inp)) == 0
}

test_flink_unavailable_or_unconfigured_source_is_silent_here if {
	inp := _ft_input({}, {"available": false, "configured": true, "error": "cannot reach http://x:1 (connection refused)"})
	count(_ft_findings(inp)) == 0
	inp2 := _ft_input({}, {"available": false, "configured": false})
	count(_ft_findings(inp2)) == 0
}

# ---------------------------------------------------------------- SW-CKPT-011

_ft_failed(id) := object.union(
	_ft_entry(id, "failed", 600000),
	{"failure_timestamp": _ft_now, "failure_message": "Checkpoint expired before completing."},
)
