package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-002

test_ckpt002_min_pause_above_interval if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 30000, "min_pause": 60000}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.min_pause"
	f.evidence == {"min_pause": 60000, "interval": 30000}
	contains(f.message, "(1m) is not shorter than checkpoint.interval (30s)")
}

test_ckpt002_min_pause_equal_to_interval_fires if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 30000, "min_pause": 30000}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {"checkpoint.min_pause"}
}

test_ckpt002_min_pause_just_below_interval_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 30000, "min_pause": 29999}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_timeout_below_max_duration if {
	findings := deny with input as {"contract": {"checkpoint": {"timeout": 30000, "health": {"max_duration": 60000}}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.timeout"
	f.evidence == {"timeout": 30000, "max_duration": 60000}
}

test_ckpt002_timeout_equal_to_max_duration_fires if {
	findings := deny with input as {"contract": {"checkpoint": {"timeout": 60000, "health": {"max_duration": 60000}}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {"checkpoint.timeout"}
}

test_ckpt002_timeout_just_above_max_duration_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"timeout": 60001, "health": {"max_duration": 60000}}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_unaligned_with_at_least_once if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "mode": "at_least_once"}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {"checkpoint.unaligned"}
}

test_ckpt002_unaligned_with_exactly_once_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "mode": "exactly_once", "max_concurrent": 1}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_aligned_at_least_once_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": false, "mode": "at_least_once", "max_concurrent": 3}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_unaligned_with_concurrent_checkpoints if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "max_concurrent": 2}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.max_concurrent"
	f.evidence == {"unaligned": true, "max_concurrent": 2}
}

test_ckpt002_unaligned_with_one_concurrent_checkpoint_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "max_concurrent": 1}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_max_age_below_interval if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 120000, "health": {"max_age": 90000}}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.health.max_age"
	f.evidence == {"max_age": 90000, "interval": 120000}
	contains(f.message, "(90s) is shorter than checkpoint.interval (2m)")
}

test_ckpt002_max_age_equal_to_interval_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 120000, "health": {"max_age": 120000}}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_each_contradiction_is_its_own_finding if {
	findings := deny with input as {"contract": {"checkpoint": {
		"interval": 60000, "min_pause": 60000, "timeout": 10000, "mode": "at_least_once",
		"unaligned": true, "max_concurrent": 2, "health": {"max_duration": 10000, "max_age": 59999},
	}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {
		"checkpoint.min_pause", "checkpoint.timeout", "checkpoint.unaligned",
		"checkpoint.max_concurrent", "checkpoint.health.max_age",
	}
	count([f | some f in findings; f.rule == "SW-CKPT-002"]) == 5
}
