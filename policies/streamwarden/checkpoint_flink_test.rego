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

_ft_rules(findings) := {f.rule | some f in findings}

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

# ---------------------------------------------------------------- SW-CKPT-003 (running side)

test_ckpt003_flink_interval_differs_names_both_values_and_sources if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"interval": 30000}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-003") == {"checkpoint.interval"}
	some f in findings
	f.rule == "SW-CKPT-003"
	f.source == "flink"
	object.get(f, "file", null) == null
	contains(f.message, "contract checkpoint.interval 1m vs running job orders-enrichment (jid 4d986ca0…) 30s")
	contains(f.message, sprintf("from /jobs/%s/checkpoints/config", [_ft_jid]))
	f.evidence.contract == 60000
	f.evidence.running == 30000
	f.value == "flink:30000"
}

test_ckpt003_flink_mode_differs if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"mode": "at_least_once"}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-003") == {"checkpoint.mode"}
	some f in findings
	f.rule == "SW-CKPT-003"
	contains(f.message, "contract checkpoint.mode exactly_once vs running job orders-enrichment (jid 4d986ca0…) at_least_once")
}

test_ckpt003_flink_tolerable_failures_differs if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"tolerable_failures": 0}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-003") == {"checkpoint.tolerable_failures"}
	some f in findings
	contains(f.message, "contract checkpoint.tolerable_failures 3 vs running job")
}

test_ckpt003_flink_one_finding_per_setting if {
	cfg := {"timeout": 60000, "min_pause": 0, "max_concurrent": 2, "unaligned": true}
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": cfg}))
	findings := deny with input as inp
	paths := lib.rule_paths(findings, "SW-CKPT-003")
	paths == {"checkpoint.timeout", "checkpoint.min_pause", "checkpoint.max_concurrent", "checkpoint.unaligned"}
	some f in findings
	f.path == "checkpoint.unaligned"
	contains(f.message, "contract checkpoint.unaligned false vs running job orders-enrichment (jid 4d986ca0…) true")
}

test_ckpt003_flink_field_absent_from_contract_is_not_compared if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"min_pause": 0}}))
	without := json.remove(inp, ["contract/checkpoint/min_pause"])
	findings := deny with input as without
	lib.no_rule(findings, "SW-CKPT-003")
}

test_ckpt003_flink_silent_when_the_job_does_not_checkpoint if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"enabled": false, "interval": null, "mode": "at_least_once"}}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-003")
}

test_ckpt003_flink_silent_and_gap_reported_when_config_unavailable if {
	cfg := {"available": false, "error": "http://flink.test:8081/jobs/x/checkpoints/config answered HTTP 503"}
	inp := _ft_input({}, json.patch(_ft_flink, [{"op": "replace", "path": "/checkpoint_config", "value": cfg}]))
	findings := _ft_findings(inp)
	_ft_rules(findings) == {"SW-FACT-001"}
	some f in findings
	f.path == "facts.flink.checkpoint_config"
	f.value == "flink.checkpoint_config"
	object.get(f, "severity", null) == null
	contains(f.message, "flink facts checkpoint_config of job orders-enrichment (jid 4d986ca0…) could not be gathered: ")
	contains(f.message, "answered HTTP 503")
}

test_fact001_flink_section_gap_is_an_error_in_gate_mode if {
	inp := object.union(
		_ft_input({}, json.patch(_ft_flink, [{"op": "replace", "path": "/checkpoints", "value": {"available": false}}])),
		{"mode": "gate"},
	)
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-FACT-001"
	f.path == "facts.flink.checkpoints"
	f.severity == "error"
	contains(f.message, "no error was reported")
}

# ---------------------------------------------------------------- SW-CKPT-010

test_ckpt010_latest_checkpoint_older_than_max_age if {
	old := object.union(_ft_history[0], {"latest_ack_timestamp": _ft_now - 400000})
	inp := _ft_input({}, _ft_checkpoints_with({"latest": {"completed": old}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-010") == {"checkpoint.health.max_age"}
	some f in findings
	f.rule == "SW-CKPT-010"
	f.source == "flink"
	f.evidence.age == 400000
	contains(f.message, "running job orders-enrichment (jid 4d986ca0…): the latest completed checkpoint (#41")
	contains(f.message, "completed 6m40s ago, older than contract checkpoint.health.max_age 5m")
}

test_ckpt010_age_equal_to_max_age_passes if {
	edge := object.union(_ft_history[0], {"latest_ack_timestamp": _ft_now - 300000})
	inp := _ft_input({}, _ft_checkpoints_with({"latest": {"completed": edge}}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-010")
}

test_ckpt010_age_uses_input_now_when_cluster_clock_missing if {
	old := object.union(_ft_history[0], {"latest_ack_timestamp": 1764000000000 - 300001})
	flink := json.remove(_ft_checkpoints_with({"latest": {"completed": old}}), ["job/now"])
	inp := _ft_input({}, flink)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-010"
	f.evidence.age == 300001
}

test_ckpt010_no_completed_checkpoint_after_max_age_plus_timeout if {
	started := _ft_now - ((300000 + 600000) + 1)
	flink := object.union(
		_ft_checkpoints_with({"latest": {"completed": null}, "counts": {"failed": 4}}),
		{"job": {"start_time": started}},
	)
	inp := _ft_input({}, flink)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-010"
	f.evidence.running_for == 900001
	contains(f.message, "has run for 900001ms without completing a checkpoint (4 failed")
	contains(f.message, "checkpoint.health.max_age 5m plus checkpoint.timeout 10m have passed")
}

test_ckpt010_no_completed_checkpoint_within_grace_passes if {
	started := _ft_now - (300000 + 600000)
	flink := object.union(_ft_checkpoints_with({"latest": {"completed": null}}), {"job": {"start_time": started}})
	inp := _ft_input({}, flink)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-010")
}

test_ckpt010_grace_uses_running_timeout_when_contract_has_none if {
	started := _ft_now - ((300000 + 60000) + 1)
	flink := object.union(
		_ft_checkpoints_with({"latest": {"completed": null}}),
		{"job": {"start_time": started}, "checkpoint_config": {"timeout": 60000}},
	)
	inp := json.remove(_ft_input({}, flink), ["contract/checkpoint/timeout"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-010"
	contains(f.message, "plus the running job's timeout 1m")
}

test_ckpt010_grace_uses_flink_default_timeout_without_any if {
	started := _ft_now - ((300000 + 600000) + 1)
	flink := json.remove(
		object.union(_ft_checkpoints_with({"latest": {"completed": null}}), {"job": {"start_time": started}}),
		["checkpoint_config/timeout"],
	)
	inp := json.remove(_ft_input({}, flink), ["contract/checkpoint/timeout"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-010"
	contains(f.message, "plus Flink's default timeout 10m")
}

test_ckpt010_silent_when_job_not_running if {
	old := object.union(_ft_history[0], {"latest_ack_timestamp": _ft_now - 4000000})
	flink := object.union(_ft_checkpoints_with({"latest": {"completed": old}}), {"job": {"state": "canceled"}})
	inp := _ft_input({}, flink)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-010")
}

test_ckpt010_silent_without_health_max_age if {
	old := object.union(_ft_history[0], {"latest_ack_timestamp": _ft_now - 4000000})
	inp := json.remove(_ft_input({}, _ft_checkpoints_with({"latest": {"completed": old}})), ["contract/checkpoint/health/max_age"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-010")
}

# ---------------------------------------------------------------- SW-CKPT-011

_ft_failed(id) := object.union(
	_ft_entry(id, "failed", 600000),
	{"failure_timestamp": _ft_now, "failure_message": "Checkpoint expired before completing."},
)

test_ckpt011_more_failed_than_max_failed if {
	history := array.concat([_ft_failed(41), _ft_failed(40), _ft_failed(39), _ft_failed(38)], array.slice(_ft_history, 4, 10))
	inp := _ft_input({}, _ft_checkpoints_with({"history": history, "counts": {"failed": 9}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-011") == {"checkpoint.health.max_failed"}
	some f in findings
	f.rule == "SW-CKPT-011"
	f.evidence.failed_in_history == 4
	f.evidence.failed_total == 9
	f.evidence.failed_ids == [41, 40, 39, 38]
	contains(f.message, "4 of the last 10 checkpoints failed")
	contains(f.message, "more than contract checkpoint.health.max_failed 3; the latest failure: Checkpoint expired before completing.")
}

test_ckpt011_failed_equal_to_max_failed_passes if {
	history := array.concat([_ft_failed(41), _ft_failed(40), _ft_failed(39)], array.slice(_ft_history, 3, 10))
	inp := _ft_input({}, _ft_checkpoints_with({"history": history}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-011")
}

test_ckpt011_failure_without_message if {
	bare := json.remove(_ft_failed(41), ["failure_message"])
	inp := _ft_input({"checkpoint": {"health": {"max_failed": 0}}}, _ft_checkpoints_with({"history": [bare]}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-011"
	endswith(f.message, "more than contract checkpoint.health.max_failed 0")
}

# ---------------------------------------------------------------- SW-CKPT-012

test_ckpt012_checkpoint_slower_than_max_duration if {
	history := array.concat([_ft_entry(41, "completed", 61000)], array.slice(_ft_history, 1, 10))
	inp := _ft_input({}, _ft_checkpoints_with({"history": history, "latest": {"completed": history[0]}}))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-012") == {"checkpoint.health.max_duration"}
	some f in findings
	f.rule == "SW-CKPT-012"
	f.evidence.checkpoint_id == 41
	f.evidence.slow == 1
	contains(f.message, "checkpoint #41 took 61s end to end")
	contains(f.message, "longer than contract checkpoint.health.max_duration 1m")
}

test_ckpt012_duration_equal_to_max_duration_passes if {
	history := array.concat([_ft_entry(41, "completed", 60000)], array.slice(_ft_history, 1, 10))
	inp := _ft_input({}, _ft_checkpoints_with({"history": history}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-CKPT-012")
}

test_ckpt012_slower_than_half_the_timeout_without_max_duration if {
	history := array.concat([_ft_entry(41, "completed", 300001)], array.slice(_ft_history, 1, 10))
	inp := json.remove(_ft_input({}, _ft_checkpoints_with({"history": history})), ["contract/checkpoint/health/max_duration"])
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-012") == {"checkpoint.timeout"}
	some f in findings
	contains(f.message, "longer than half of checkpoint.timeout 10m")
}

test_ckpt012_tightest_bound_wins_and_ties_prefer_max_duration if {
	history := array.concat([_ft_entry(41, "completed", 400000)], array.slice(_ft_history, 1, 10))
	inp := _ft_input({"checkpoint": {"health": {"max_duration": 300000}}}, _ft_checkpoints_with({"history": history}))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-012") == {"checkpoint.health.max_duration"}
}

test_ckpt012_latest_completed_counts_beyond_history if {
	slow := _ft_entry(30, "completed", 90000)
	failed := [_ft_failed(id) | some i in numbers.range(0, 9); id := 41 - i]
	inp := _ft_input({}, _ft_checkpoints_with({"history": failed, "latest": {"completed": slow}}))
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-012"
	f.evidence.checkpoint_id == 30
}

test_ckpt012_failed_and_in_progress_checkpoints_do_not_count if {
	running := object.union(_ft_entry(42, "in_progress", 0), {"end_to_end_duration": null})
	history := array.concat([running, _ft_failed(41)], array.slice(_ft_history, 2, 10))
	inp := _ft_input({}, _ft_checkpoints_with({"history": history}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-CKPT-012")
}

# ---------------------------------------------------------------- SW-CKPT-013

test_ckpt013_cancelled_job_is_reported_with_its_last_failure if {
	entry := {"exception": "java.lang.RuntimeException", "message": "java.lang.RuntimeException: boom", "timestamp": 1}
	flink := _ft_flink_with({"job": {"state": "canceled", "end_time": _ft_now - 1000}, "exceptions": {"entries": [entry]}})
	inp := _ft_input({}, flink)
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-013") == {"job.name"}
	some f in findings
	f.rule == "SW-CKPT-013"
	f.value == "flink:canceled"
	contains(f.message, "job orders-enrichment (jid 4d986ca0…) is CANCELED, not running")
	contains(f.message, "latest failure: java.lang.RuntimeException: boom")
}

test_ckpt013_job_not_on_the_cluster if {
	flink := {
		"available": true, "configured": true, "rest_url": "http://flink.test:8081", "job_name": "orders-enrichment",
		"job_found": false, "job_id": null, "job_ids": [], "duplicates": [], "similar_jobs": ["orders-enrichment-v2"],
	}
	inp := _ft_input({}, flink)
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-013"
	f.path == "job.name"
	f.message == "no job named \"orders-enrichment\" on http://flink.test:8081 (from /jobs/overview), so it is not running; jobs with similar names: orders-enrichment-v2"
}

test_ckpt013_job_not_on_the_cluster_without_similar_names if {
	flink := {"available": true, "configured": true, "rest_url": "http://f:1", "job_name": "x", "job_found": false}
	inp := _ft_input({}, flink)
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-013"
	endswith(f.message, "so it is not running")
}

test_ckpt013_restarts_when_restart_strategy_is_none if {
	inp := _ft_input({"job": {"restart_strategy": "none"}}, _ft_flink_with({"restarts": 2}))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-013") == {"job.restart_strategy"}
	some f in findings
	contains(f.message, "restarted 2 times (from metrics.numRestarts) but contract job.restart_strategy is none")
}

test_ckpt013_no_restart_with_strategy_none_passes if {
	inp := _ft_input({"job": {"restart_strategy": "none"}}, _ft_flink)
	findings := warn with input as inp
	lib.no_rule(findings, "SW-CKPT-013")
}

test_ckpt013_restarts_above_max_restarts if {
	inp := _ft_input({"checkpoint": {"health": {"max_restarts": 3}}}, _ft_flink_with({"restarts": 4}))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-013") == {"checkpoint.health.max_restarts"}
	some f in findings
	f.rule == "SW-CKPT-013"
	contains(f.message, "restarted 4 times (from metrics.numRestarts) but contract checkpoint.health.max_restarts tolerates 3")
	f.evidence.allowed == 3
}

test_ckpt013_restarts_at_max_restarts_pass if {
	inp := _ft_input({"checkpoint": {"health": {"max_restarts": 3}}}, _ft_flink_with({"restarts": 3}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-CKPT-013")
}

test_ckpt013_strategy_none_wins_over_max_restarts if {
	inp := _ft_input(
		{"job": {"restart_strategy": "none"}, "checkpoint": {"health": {"max_restarts": 5}}},
		_ft_flink_with({"restarts": 1}),
	)
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-CKPT-013") == {"job.restart_strategy"}
}

test_ckpt013_unknown_restart_count_is_silent if {
	inp := _ft_input({"checkpoint": {"health": {"max_restarts": 0}}}, _ft_flink_with({"restarts": null}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-CKPT-013")
}

test_ckpt013_restarts_tolerated_by_other_strategies if {
	inp := _ft_input({}, _ft_flink_with({"restarts": 7}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-CKPT-013")
}
