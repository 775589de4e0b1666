package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

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
