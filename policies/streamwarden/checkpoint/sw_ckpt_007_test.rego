package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-007

test_ckpt007_exactly_once_sink_with_at_least_once_mode if {
	inp := lib.contract_with({"checkpoint": {"mode": "at_least_once"}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-007"
	f.path == "checkpoint.mode"
	f.evidence == {"mode": "at_least_once", "exactly_once_sinks": ["orders-table"]}
}

test_ckpt007_at_least_once_sinks_pass if {
	findings := deny with input as {"contract": {
		"job": {"sinks": [{"name": "s", "delivery": "at_least_once"}]},
		"checkpoint": {"mode": "at_least_once"},
	}}
	lib.no_rule(findings, "SW-CKPT-007")
}

test_ckpt007_absent_mode_is_exactly_once if {
	inp := lib.contract_without(["checkpoint/mode"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-007")
}
