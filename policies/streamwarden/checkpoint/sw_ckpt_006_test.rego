package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-006

test_ckpt006_fewer_than_retention_asks if {
	inp := lib.contract_with({"checkpoint": {"num_retained": 2}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-006"
	f.path == "checkpoint.num_retained"
	f.evidence.num_retained == 2
	f.evidence.required == 3
	contains(f.message, "num_retained is 2 but the retention contract needs at least 3")
}

test_ckpt006_equal_to_retention_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"num_retained": 3}, "retention": {"checkpoints": {"num_retained": 3}}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_one_with_rollback_window if {
	findings := warn with input as {"contract": {"checkpoint": {"num_retained": 1}, "retention": {"rollback_window": 86400000}}}
	some f in findings
	f.rule == "SW-CKPT-006"
	f.path == "checkpoint.num_retained"
	f.evidence.required == 2
}

test_ckpt006_two_with_rollback_window_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"num_retained": 2}, "retention": {"rollback_window": 86400000}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_larger_requirement_wins_in_one_finding if {
	findings := warn with input as {"contract": {
		"checkpoint": {"num_retained": 1},
		"retention": {"rollback_window": 86400000, "checkpoints": {"num_retained": 5}},
	}}
	ckpt006 := [f | some f in findings; f.rule == "SW-CKPT-006"]
	count(ckpt006) == 1
	ckpt006[0].evidence.required == 5
}

test_ckpt006_absent_num_retained_is_flink_default_one if {
	inp := lib.contract_without(["checkpoint/num_retained"])
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-006"
	f.evidence.num_retained == null
	f.evidence.effective_num_retained == 1
	contains(f.message, "not set (Flink default: 1)")
}

test_ckpt006_absent_num_retained_meets_a_requirement_of_one if {
	findings := warn with input as {"contract": {"checkpoint": {"interval": 60000}, "retention": {"checkpoints": {"num_retained": 1}}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_no_checkpoint_section_is_silent if {
	findings := warn with input as {"contract": {"retention": {"rollback_window": 86400000, "checkpoints": {"num_retained": 3}}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_is_a_warning if {
	inp := lib.contract_with({"checkpoint": {"num_retained": 1}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-006")
}
