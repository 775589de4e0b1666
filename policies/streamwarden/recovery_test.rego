package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# Bind the result to a local before `with input as` (see checkpoint_test.rego).
_t_with(patch) := {"contract": object.union(lib.example_contract, patch)}

_t_without(paths) := {"contract": json.remove(lib.example_contract, paths)}

_t_backfill(backfill) := {"contract": {"backfills": [{"job": "orders-backfill", "branch": "backfill-2025-03"}, backfill]}}

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_recovery_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-REC-001

test_rec001_owner_missing if {
	inp := _t_without(["metadata/owner"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-001"
	f.path == "metadata.owner"
	f.evidence == {"owner": null}
}

test_rec001_owner_empty_or_whitespace if {
	inp_empty := _t_with({"metadata": {"owner": ""}})
	findings_empty := deny with input as inp_empty
	lib.rule_paths(findings_empty, "SW-REC-001") == {"metadata.owner"}
	inp_space := _t_with({"metadata": {"owner": " \t "}})
	findings_space := deny with input as inp_space
	lib.rule_paths(findings_space, "SW-REC-001") == {"metadata.owner"}
}

test_rec001_without_metadata_section if {
	findings := deny with input as {"contract": {"job": {"name": "j"}}}
	lib.rule_paths(findings, "SW-REC-001") == {"metadata.owner"}
}

test_rec001_one_finding_per_consumer_without_contact if {
	findings := deny with input as {"contract": {"metadata": {"owner": "payments-data", "consumers": [
		{"name": "finance-dashboard", "contact": "#finance-data"},
		{"name": "fraud-features"},
		{"name": "ops", "contact": "  "},
	]}}}
	lib.rule_paths(findings, "SW-REC-001") == {"metadata.consumers[1].contact", "metadata.consumers[2].contact"}
	some f in findings
	f.path == "metadata.consumers[1].contact"
	f.evidence == {"consumer": "fraud-features", "contact": null}
	contains(f.message, `consumer "fraud-features" (metadata.consumers[1]) has no contact`)
}

test_rec001_owner_with_surrounding_spaces_passes if {
	findings := deny with input as {"contract": {"metadata": {"owner": " payments-data "}}}
	lib.no_rule(findings, "SW-REC-001")
}

# ---------------------------------------------------------------- SW-REC-004

test_rec004_backfill_without_any_boundary if {
	inp := _t_backfill({"job": "orders-replay", "reason": "replay March"})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-004"
	f.path == "backfills[1].branch"
	f.evidence == {"job": "orders-replay", "branch": null, "from": null, "to": null}
	contains(f.message, `backfill "orders-replay" (backfills[1]) has no boundary`)
}

test_rec004_backfill_with_half_a_range if {
	inp_from := _t_backfill({"job": "r", "from": "2025-03-01T00:00:00Z"})
	findings_from := deny with input as inp_from
	lib.rule_paths(findings_from, "SW-REC-004") == {"backfills[1].branch"}
	inp_to := _t_backfill({"job": "r", "to": "2025-04-01T00:00:00Z"})
	findings_to := deny with input as inp_to
	lib.rule_paths(findings_to, "SW-REC-004") == {"backfills[1].branch"}
}

test_rec004_backfill_with_blank_branch if {
	inp := _t_backfill({"job": "r", "branch": " "})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-004") == {"backfills[1].branch"}
}

test_rec004_backfill_with_a_branch_passes if {
	inp := _t_backfill({"job": "r", "branch": "replay"})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-004")
}

test_rec004_backfill_with_a_range_passes if {
	inp := _t_backfill({"job": "r", "from": "2025-03-01T00:00:00Z", "to": "2025-04-01T00:00:00Z"})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-004")
}

# ---------------------------------------------------------------- SW-REC-005

test_rec005_non_rewindable_source_with_exactly_once_sink if {
	inp := _t_with({"job": {"sources": [{"name": "clicks", "kind": "socket", "uid": "clicks", "rewindable": false}]}})
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
