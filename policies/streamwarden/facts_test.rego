package streamwarden.facts

import rego.v1

import data.streamwarden.lib

_t_quiet := {"available": false, "configured": false}

_t_ok := {"available": true, "configured": true}

_t_broken := {"available": false, "configured": true, "error": "GET /jobs/overview: connection refused"}

_t_facts(flink) := {
	"deployment": _t_ok,
	"flink": flink,
	"iceberg": _t_quiet,
	"data": _t_quiet,
	"savepoint": _t_quiet,
}

# ---------------------------------------------------------------- quiet cases

test_fact001_not_configured_is_quiet if {
	inp := lib.example_input
	findings := warn with input as inp
	count(findings) == 0
}

test_fact001_available_is_quiet if {
	inp := {"facts": _t_facts(_t_ok)}
	findings := warn with input as inp
	count(findings) == 0
}

test_fact001_without_facts_is_quiet if {
	findings := warn with input as {"contract": {}}
	count(findings) == 0
}

# ---------------------------------------------------------------- SW-FACT-001

test_fact001_configured_but_unavailable_warns if {
	inp := {"facts": _t_facts(_t_broken)}
	findings := warn with input as inp
	count(findings) == 1
	some f in findings
	f == {
		"rule": "SW-FACT-001",
		"message": "flink facts could not be gathered: GET /jobs/overview: connection refused; rules that need them were not evaluated",
		"path": "facts.flink",
		"value": "flink",
		"evidence": {"source": "flink", "error": "GET /jobs/overview: connection refused"},
	}
}

test_fact001_is_an_error_in_the_gate if {
	inp := {"facts": _t_facts(_t_broken), "mode": "gate"}
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-FACT-001"
	f.path == "facts.flink"
	f.severity == "error"
}

test_fact001_other_modes_keep_the_warning if {
	inp := {"facts": _t_facts(_t_broken), "mode": "check"}
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-FACT-001"
	not f.severity
}

test_fact001_one_finding_per_source if {
	inp := {"facts": {
		"deployment": {"available": false, "configured": true, "error": "deploy/x.yaml: not found"},
		"flink": _t_broken,
		"iceberg": {"available": false, "configured": true},
		"data": _t_quiet,
		"savepoint": _t_ok,
	}}
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-FACT-001") == {"facts.deployment", "facts.flink", "facts.iceberg"}
	some f in findings
	f.path == "facts.iceberg"
	f.evidence.error == null
	contains(f.message, "iceberg facts could not be gathered: no error was reported")
}

test_fact001_blank_error_text if {
	inp := {"facts": _t_facts({"available": false, "configured": true, "error": " "})}
	findings := warn with input as inp
	some f in findings
	contains(f.message, "no error was reported")
}

test_fact001_ignores_malformed_sources if {
	inp := {"facts": {"flink": "unreachable", "iceberg": null}}
	findings := warn with input as inp
	count(findings) == 0
}
