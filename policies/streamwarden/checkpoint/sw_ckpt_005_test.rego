package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-005

test_ckpt005_delete_on_cancellation_with_rollback_window if {
	inp := lib.contract_with({"checkpoint": {"externalized": "delete_on_cancellation"}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-005"
	f.path == "checkpoint.externalized"
	f.evidence == {"externalized": "delete_on_cancellation", "rollback_window": 259200000}
	contains(f.message, "externalized is delete_on_cancellation but retention.rollback_window is 3d")
}

test_ckpt005_none_with_rollback_window if {
	inp := lib.contract_with({"checkpoint": {"externalized": "none"}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-005") == {"checkpoint.externalized"}
}

test_ckpt005_absent_externalized_is_flink_default if {
	inp := lib.contract_without(["checkpoint/externalized"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-005"
	f.path == "checkpoint.externalized"
	f.evidence.externalized == null
	contains(f.message, "not set (Flink default")
}

test_ckpt005_zero_rollback_window_is_silent if {
	inp := lib.contract_with({"checkpoint": {"externalized": "delete_on_cancellation"}, "retention": {"rollback_window": 0}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-005")
}

test_ckpt005_no_rollback_window_is_silent if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 60000, "externalized": "delete_on_cancellation"}}}
	lib.no_rule(findings, "SW-CKPT-005")
}

test_ckpt005_no_checkpoint_section_is_silent if {
	findings := deny with input as {"contract": {"retention": {"rollback_window": 259200000}}}
	lib.no_rule(findings, "SW-CKPT-005")
}

test_ckpt005_shortest_window_fires if {
	findings := deny with input as {"contract": {"checkpoint": {}, "retention": {"rollback_window": 1}}}
	lib.rule_paths(findings, "SW-CKPT-005") == {"checkpoint.externalized"}
}
