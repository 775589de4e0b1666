package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-001

test_state001_operator_without_uid if {
	inp := lib.contract_without(["state/operators/1/uid"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-001"
	f.path == "state.operators[1].uid"
	f.evidence == {"index": 1, "uid": null, "kind": "keyed"}
}

test_state001_blank_uid if {
	inp := _t_operator(0, {"uid": "  "})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-STATE-001") == {"state.operators[0].uid"}
}

test_state001_operator_without_uid_fires_even_when_auto_uids_allowed if {
	findings := deny with input as {"contract": {"state": {"auto_generated_uids": "allowed", "operators": [{"kind": "operator"}]}}}
	lib.rule_paths(findings, "SW-STATE-001") == {"state.operators[0].uid"}
}

test_state001_source_and_sink_without_uid_when_forbidden if {
	inp := lib.contract_without(["job/sources/0/uid", "job/sinks/0/uid"])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-STATE-001") == {"job.sources[0].uid", "job.sinks[0].uid"}
	some f in findings
	f.path == "job.sources[0].uid"
	f.evidence.name == "orders-topic"
	contains(f.message, "job.sources[0] (orders-topic) has no uid")
}

test_state001_unnamed_sink_without_uid if {
	findings := deny with input as {"contract": {"state": {"auto_generated_uids": "forbidden"}, "job": {"sinks": [{"delivery": "at_least_once"}]}}}
	some f in findings
	f.path == "job.sinks[0].uid"
	contains(f.message, "(unnamed)")
}

test_state001_source_without_uid_when_auto_uids_allowed_passes if {
	inp := lib.contract_with({"state": {"auto_generated_uids": "allowed"}})
	inp2 := {"contract": json.remove(inp.contract, ["job/sources/0/uid", "job/sinks/0/uid"])}
	findings := deny with input as inp2
	lib.no_rule(findings, "SW-STATE-001")
}
