package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-REC-005

test_rec005_non_rewindable_source_with_exactly_once_sink if {
	inp := lib.contract_with({"job": {"sources": [{"name": "clicks", "kind": "socket", "uid": "clicks", "rewindable": false}]}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-REC-005"
	f.path == "job.sources[0].rewindable"
	f.evidence == {"source": "clicks", "rewindable": false, "exactly_once_sinks": ["orders-table"]}
	f.message == `source "clicks" (job.sources[0]) is not rewindable while sink "orders-table" promises delivery exactly_once: records since the last checkpoint cannot be replayed on restore, so they are lost or duplicated; make the source rewindable or declare the sink at_least_once`
}

test_rec005_exactly_once_sink_alone if {
	findings := warn with input as {"contract": {"job": {
		"sources": [{"name": "b", "rewindable": false}],
		"sinks": [{"name": "s", "delivery": "exactly_once"}],
	}}}
	lib.rule_paths(findings, "SW-REC-005") == {"job.sources[0].rewindable"}
}

test_rec005_the_promise_is_the_sinks_whatever_the_checkpoint_mode if {
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "b", "rewindable": false}], "sinks": [{"name": "s", "delivery": "exactly_once"}]},
		"checkpoint": {"mode": "at_least_once"},
	}}
	lib.rule_paths(findings, "SW-REC-005") == {"job.sources[0].rewindable"}
}

test_rec005_each_non_rewindable_source_names_only_the_exactly_once_sinks if {
	findings := warn with input as {"contract": {"job": {
		"sources": [{"name": "a", "rewindable": false}, {"name": "b", "rewindable": true}, {"name": "c", "rewindable": false}],
		"sinks": [
			{"name": "z", "delivery": "exactly_once"},
			{"name": "m", "delivery": "at_least_once"},
			{"name": "k", "delivery": "exactly_once"},
			{"name": "n"},
		],
	}}}
	lib.rule_paths(findings, "SW-REC-005") == {"job.sources[0].rewindable", "job.sources[2].rewindable"}
	rec005 := [f | some f in findings; f.rule == "SW-REC-005"]
	every f in rec005 {
		f.evidence.exactly_once_sinks == ["k", "z"]
		contains(f.message, `while sinks "k" and "z" promise delivery exactly_once`)
	}
}

test_rec005_checkpoint_mode_alone_is_no_delivery_promise if {
	# at-least-once sinks, checkpoint.mode exactly_once, a non-rewindable source: silent
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "a", "rewindable": true}, {"name": "b", "rewindable": false}], "sinks": [{"name": "s", "delivery": "at_least_once"}]},
		"checkpoint": {"mode": "exactly_once"},
	}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_no_sinks_is_silent if {
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "b", "rewindable": false}]},
		"checkpoint": {"mode": "exactly_once"},
	}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_empty_sinks_is_silent if {
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "b", "rewindable": false}], "sinks": []},
		"checkpoint": {"mode": "exactly_once"},
	}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_sink_without_delivery_promises_nothing if {
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "b", "rewindable": false}], "sinks": [{"name": "s", "kind": "iceberg"}]},
		"checkpoint": {"mode": "exactly_once"},
	}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_at_least_once_everywhere_passes if {
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "b", "rewindable": false}], "sinks": [{"name": "s", "delivery": "at_least_once"}]},
		"checkpoint": {"mode": "at_least_once"},
	}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_rewindable_sources_pass if {
	findings := warn with input as {"contract": {
		"job": {"sources": [{"name": "a", "rewindable": true}, {"name": "b", "rewindable": true}], "sinks": [{"name": "s", "delivery": "exactly_once"}]},
		"checkpoint": {"mode": "exactly_once"},
	}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_no_sources_is_silent if {
	findings := warn with input as {"contract": {"job": {"sinks": [{"name": "s", "delivery": "exactly_once"}]}}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_undeclared_rewindable_is_not_judged if {
	findings := warn with input as {"contract": {"job": {
		"sources": [{"name": "b"}],
		"sinks": [{"name": "s", "delivery": "exactly_once"}],
	}}}
	lib.no_rule(findings, "SW-REC-005")
}

test_rec005_remediation_silences_it if {
	firing := {"job": {"sources": [{"name": "b", "rewindable": false}], "sinks": [{"name": "s", "delivery": "exactly_once"}]}, "checkpoint": {"mode": "exactly_once"}}
	rewound := json.patch(firing, [{"op": "replace", "path": "/job/sources/0/rewindable", "value": true}])
	relaxed := json.patch(firing, [{"op": "replace", "path": "/job/sinks/0/delivery", "value": "at_least_once"}])
	before := warn with input as {"contract": firing}
	after_rewound := warn with input as {"contract": rewound}
	after_relaxed := warn with input as {"contract": relaxed}
	lib.rule_paths(before, "SW-REC-005") == {"job.sources[0].rewindable"}
	lib.no_rule(after_rewound, "SW-REC-005")
	lib.no_rule(after_relaxed, "SW-REC-005")
}
