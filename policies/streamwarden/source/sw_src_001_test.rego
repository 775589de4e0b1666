package streamwarden.source

import rego.v1

import data.streamwarden.lib

_t_sources(sources) := {"contract": {"job": {"name": "j", "sources": sources}}}

test_example_contract_passes_every_source_rule if {
	inp := lib.example_input
	warned := warn with input as inp
	count(warned) == 0
}

test_src001_rewindable_without_retention if {
	findings := warn with input as _t_sources([
		{"name": "orders-topic", "kind": "kafka", "rewindable": true, "retention": 604800000},
		{"name": "clicks", "kind": "kafka", "rewindable": true},
	])
	lib.rule_paths(findings, "SW-SRC-001") == {"job.sources[1].retention"}
	some f in findings
	f.message == `source "clicks" (job.sources[1]) is rewindable but declares no retention: whether a restore from an old savepoint can still read it cannot be checked (SW-REC-006); declare how long it keeps its records`
	f.evidence == {"source": "clicks"}
	f.value == "clicks"
}

test_src001_silent_unless_rewindable_true if {
	flags := warn with input as _t_sources([{"name": "a", "rewindable": false}, {"name": "b"}])
	count(flags) == 0
	no_sources := warn with input as {"contract": {"job": {"name": "j"}}}
	count(no_sources) == 0
	no_job := warn with input as {"contract": {}}
	count(no_job) == 0
}

test_src001_unnamed_source if {
	findings := warn with input as _t_sources([{"rewindable": true}])
	some f in findings
	f.evidence == {"source": null}
	startswith(f.message, "source null (job.sources[0]) is rewindable")
}
