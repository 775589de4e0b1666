package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

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
