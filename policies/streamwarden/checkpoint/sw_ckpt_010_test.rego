package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

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
