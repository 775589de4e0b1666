package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

test_ckpt003_flink_silent_and_gap_reported_when_config_unavailable if {
	cfg := {"available": false, "error": "http://flink.test:8081/jobs/x/checkpoints/config answered HTTP 503"}
	inp := _ft_input({}, json.patch(_ft_flink, [{"op": "replace", "path": "/checkpoint_config", "value": cfg}]))
	findings := _ft_findings(inp)
	lib.rule_ids(findings) == {"SW-FACT-001"}
	some f in findings
	f.path == "facts.flink.checkpoint_config"
	f.value == "flink.checkpoint_config"
	object.get(f, "severity", null) == null
	contains(f.message, "flink facts checkpoint_config of job orders-enrichment (jid 4d986ca0…) could not be gathered: ")
	contains(f.message, "answered HTTP 503")
}

test_fact001_flink_section_gap_is_an_error_in_gate_mode if {
	inp := object.union(
		_ft_input({}, json.patch(_ft_flink, [{"op": "replace", "path": "/checkpoints", "value": {"available": false}}])),
		{"mode": "gate"},
	)
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-FACT-001"
	f.path == "facts.flink.checkpoints"
	f.severity == "error"
	contains(f.message, "no error was reported")
}
