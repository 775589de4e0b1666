package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-008

test_ckpt008_minus_one_is_unlimited if {
	inp := lib.contract_with({"checkpoint": {"tolerable_failures": -1}})
	findings := warn with input as inp
	ckpt008 := [f | some f in findings; f.rule == "SW-CKPT-008"]
	count(ckpt008) == 1
	ckpt008[0].path == "checkpoint.tolerable_failures"
	ckpt008[0].evidence == {"tolerable_failures": -1, "unlimited": true}
}

test_ckpt008_int_max_is_unlimited if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 2147483647}}}
	lib.rule_paths(findings, "SW-CKPT-008") == {"checkpoint.tolerable_failures"}
}

test_ckpt008_just_below_int_max_without_health_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 2147483646}}}
	lib.no_rule(findings, "SW-CKPT-008")
}

test_ckpt008_above_max_failed if {
	inp := lib.contract_with({"checkpoint": {"tolerable_failures": 4}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-008"
	f.path == "checkpoint.tolerable_failures"
	f.evidence == {"tolerable_failures": 4, "max_failed": 3}
}

test_ckpt008_equal_to_max_failed_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 3, "health": {"max_failed": 3}}}}
	lib.no_rule(findings, "SW-CKPT-008")
}

test_ckpt008_zero_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 0}}}
	lib.no_rule(findings, "SW-CKPT-008")
}
