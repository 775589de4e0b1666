package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-001

test_ckpt001_stateful_without_checkpoint_section if {
	findings := deny with input as {"contract": {"state": {"operators": [{"uid": "dedup", "kind": "keyed"}]}}}
	some f in findings
	f.rule == "SW-CKPT-001"
	f.path == "checkpoint.interval"
	f.evidence == {"interval": null, "state_operators": 1, "exactly_once_sinks": []}
	contains(f.message, "not set")
	contains(f.message, "keeps state (1 operators")
}

test_ckpt001_exactly_once_sink_without_interval if {
	inp := lib.contract_without(["checkpoint/interval", "state/operators"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-001"
	f.path == "checkpoint.interval"
	f.evidence.exactly_once_sinks == ["orders-table"]
	contains(f.message, "exactly-once sinks (orders-table)")
}

test_ckpt001_both_reasons_in_one_finding if {
	inp := lib.contract_without(["checkpoint/interval"])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-001") == {"checkpoint.interval"}
	some f in findings
	f.rule == "SW-CKPT-001"
	contains(f.message, "keeps state (2 operators under state.operators) and it has exactly-once sinks")
}

test_ckpt001_interval_zero_is_disabled if {
	inp := lib.contract_with({"checkpoint": {"interval": 0}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-001"
	f.evidence.interval == 0
	contains(f.message, "checkpoint.interval is 0s")
}

test_ckpt001_interval_one_ms_is_enabled if {
	inp := lib.contract_with({"checkpoint": {"interval": 1, "min_pause": 0, "health": {"max_age": 1}}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-001")
}

test_ckpt001_stateless_at_least_once_pipeline_may_skip_checkpoints if {
	findings := deny with input as {"contract": {"job": {"name": "j", "sinks": [{"name": "s", "delivery": "at_least_once"}]}, "state": {"operators": []}}}
	lib.no_rule(findings, "SW-CKPT-001")
}

test_ckpt001_unnamed_sink_is_named_by_index if {
	findings := deny with input as {"contract": {"job": {"sinks": [{"delivery": "exactly_once"}]}}}
	some f in findings
	f.rule == "SW-CKPT-001"
	f.evidence.exactly_once_sinks == ["job.sinks[0]"]
}
