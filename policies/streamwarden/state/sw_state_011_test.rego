package streamwarden.state

import rego.v1

import data.streamwarden.lib

_ft_jid := "4d986ca01ddda5a426cdee76cc7caaf6"

_ft_flink(state_size) := {
	"available": true,
	"configured": true,
	"job_name": "orders-enrichment",
	"job_found": true,
	"job_id": _ft_jid,
	"job": {"available": true, "state": "running"},
	"checkpoints": {"available": true, "latest": {"completed": {"id": 41, "state_size": state_size}}},
	"metrics": {"available": true, "values": {"lastCheckpointFullSize": state_size}},
}

_ft_input(max_size, flink) := {
	"contract": object.union(lib.example_contract, {"state": {"max_size": max_size}}),
	"facts": object.union(lib.example_input.facts, {"flink": flink}),
	"now_ms": 1764000000000,
}

test_state011_state_within_max_size_passes if {
	inp := _ft_input(10737418240, _ft_flink(34015))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-STATE-011")
}

test_state011_state_equal_to_max_size_passes if {
	inp := _ft_input(10737418240, _ft_flink(10737418240))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-STATE-011")
}

test_state011_latest_checkpoint_above_max_size if {
	inp := _ft_input(10737418240, _ft_flink(15032385536))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-STATE-011") == {"state.max_size"}
	some f in findings
	f.rule == "SW-STATE-011"
	f.source == "flink"
	f.evidence.state_size == 15032385536
	f.message == sprintf(
		"running job orders-enrichment (jid 4d986ca0…): checkpoint #41 holds 14.0GiB of state (from /jobs/%s/checkpoints), above contract state.max_size 10GiB",
		[_ft_jid],
	)
}

test_state011_falls_back_to_the_full_size_metric if {
	flink := json.patch(_ft_flink(2048), [{"op": "replace", "path": "/checkpoints", "value": {"available": false, "error": "x"}}])
	inp := _ft_input(1024, flink)
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-STATE-011"
	contains(f.message, "the latest checkpoint holds 2.0KiB of state (from the lastCheckpointFullSize job metric)")
}

test_state011_small_sizes_print_in_bytes if {
	inp := _ft_input(100, _ft_flink(512))
	findings := warn with input as inp
	some f in findings
	contains(f.message, "holds 512B of state")
}

test_state011_silent_without_max_size_or_facts if {
	inp := json.remove(_ft_input(1, _ft_flink(512)), ["contract/state/max_size"])
	findings := warn with input as inp
	lib.no_rule(findings, "SW-STATE-011")
	inp2 := _ft_input(1, {"available": false, "configured": true, "error": "x"})
	findings2 := warn with input as inp2
	lib.no_rule(findings2, "SW-STATE-011")
}
