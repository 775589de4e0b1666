package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-CKPT-003 (running side)

test_ckpt003_flink_interval_differs_names_both_values_and_sources if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"interval": 30000}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-003") == {"checkpoint.interval"}
	some f in findings
	f.rule == "SW-CKPT-003"
	f.source == "flink"
	object.get(f, "file", null) == null
	contains(f.message, "contract checkpoint.interval 1m vs running job orders-enrichment (jid 4d986ca0…) 30s")
	contains(f.message, sprintf("from /jobs/%s/checkpoints/config", [_ft_jid]))
	f.evidence.contract == 60000
	f.evidence.running == 30000
	f.value == "flink:30000"
}

test_ckpt003_flink_mode_differs if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"mode": "at_least_once"}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-003") == {"checkpoint.mode"}
	some f in findings
	f.rule == "SW-CKPT-003"
	contains(f.message, "contract checkpoint.mode exactly_once vs running job orders-enrichment (jid 4d986ca0…) at_least_once")
}

test_ckpt003_flink_tolerable_failures_differs if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"tolerable_failures": 0}}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-003") == {"checkpoint.tolerable_failures"}
	some f in findings
	contains(f.message, "contract checkpoint.tolerable_failures 3 vs running job")
}

test_ckpt003_flink_one_finding_per_setting if {
	cfg := {"timeout": 60000, "min_pause": 0, "max_concurrent": 2, "unaligned": true}
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": cfg}))
	findings := deny with input as inp
	paths := lib.rule_paths(findings, "SW-CKPT-003")
	paths == {"checkpoint.timeout", "checkpoint.min_pause", "checkpoint.max_concurrent", "checkpoint.unaligned"}
	some f in findings
	f.path == "checkpoint.unaligned"
	contains(f.message, "contract checkpoint.unaligned false vs running job orders-enrichment (jid 4d986ca0…) true")
}

test_ckpt003_flink_field_absent_from_contract_is_not_compared if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"min_pause": 0}}))
	without := json.remove(inp, ["contract/checkpoint/min_pause"])
	findings := deny with input as without
	lib.no_rule(findings, "SW-CKPT-003")
}

test_ckpt003_flink_silent_when_the_job_does_not_checkpoint if {
	inp := _ft_input({}, _ft_flink_with({"checkpoint_config": {"enabled": false, "interval": null, "mode": "at_least_once"}}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-003")
}
