package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

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
