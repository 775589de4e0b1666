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

# ---------------------------------------------------------------- SW-REC-006 (contract side)

_t_sources(sources, retention) := {"contract": {"job": {"name": "j", "sources": sources}, "retention": retention}}

test_rec006_savepoints_older_than_the_topic_keeps if {
	inp := _t_sources([{"name": "orders-topic", "rewindable": true, "retention": 604800000}], {"savepoints": {"max_age": 864000000}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-006") == {"retention.savepoints.max_age"}
	some f in findings
	f.rule == "SW-REC-006"
	f.message == `retention.savepoints.max_age 10d allows restoring a savepoint that source "orders-topic" (job.sources[0]) no longer holds: it keeps 7d, less a margin of 16h48m (a tenth of its retention, at least 1h), is 6d7h12m, and 10d is not below that; a restore that old skips the records deleted in between`
	f.evidence == {
		"source": "orders-topic", "window": "retention.savepoints.max_age", "window_ms": 864000000,
		"retention_ms": 604800000, "margin_ms": 60480000, "limit_ms": 544320000,
	}
	f.value == {"source": "orders-topic", "window": "retention.savepoints.max_age"}
}

test_rec006_rollback_window_too if {
	inp := _t_sources(
		[{"name": "t", "rewindable": true, "retention": 172800000}],
		{"rollback_window": 172800000, "savepoints": {"max_age": 86400000}},
	)
	findings := deny with input as inp
	# 2d keeps 2d - 4h48m = 1d19h12m: the 2d rollback window fails, the 1d max_age passes
	lib.rule_paths(findings, "SW-REC-006") == {"retention.rollback_window"}
}

test_rec006_below_the_limit_passes if {
	# 7d less 16h48m is 6d7h12m: a 6d max_age and a 3d rollback window are younger
	inp := _t_sources([{"name": "t", "rewindable": true, "retention": 604800000}], {"rollback_window": 259200000, "savepoints": {"max_age": 518400000}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-006")
}

test_rec006_at_the_limit_fires if {
	# 20d less a tenth is exactly 18d: a savepoint 18d old is not younger than that
	inp := _t_sources([{"name": "t", "rewindable": true, "retention": 1728000000}], {"savepoints": {"max_age": 1555200000}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-006") == {"retention.savepoints.max_age"}
}

test_rec006_declared_margin if {
	sources := [{"name": "t", "rewindable": true, "retention": 604800000, "retention_margin": 0}]
	passing := _t_sources(sources, {"savepoints": {"max_age": 604799999}})
	passed := deny with input as passing
	lib.no_rule(passed, "SW-REC-006")
	failing := _t_sources([object.union(sources[0], {"retention_margin": 86400000})], {"savepoints": {"max_age": 518400000}})
	findings := deny with input as failing
	some f in findings
	f.rule == "SW-REC-006"
	contains(f.message, "it keeps 7d, less retention_margin 1d, is 6d, and 6d is not below that")
}

test_rec006_a_margin_that_eats_the_retention if {
	inp := _t_sources([{"name": "t", "rewindable": true, "retention": 3600000, "retention_margin": 7200000}], {"rollback_window": 0})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-006"
	contains(f.message, "it keeps 1h, less retention_margin 2h, is nothing, and 0s is not below that")
}

test_rec006_one_finding_per_source if {
	inp := _t_sources(
		[
			{"name": "a", "rewindable": true, "retention": 86400000},
			{"name": "b", "rewindable": true, "retention": 86400000},
			{"name": "c", "rewindable": true, "retention": 8640000000},
		],
		{"savepoints": {"max_age": 259200000}},
	)
	findings := deny with input as inp
	{f.evidence.source | some f in findings; f.rule == "SW-REC-006"} == {"a", "b"}
}

test_rec006_silent_without_what_it_compares if {
	# not rewindable, rewindable unknown, no retention, no window: nothing to compare
	max_age := {"savepoints": {"max_age": 864000000}}
	not_rewindable := deny with input as _t_sources([{"name": "t", "rewindable": false, "retention": 3600000}], max_age)
	lib.no_rule(not_rewindable, "SW-REC-006")
	unknown := deny with input as _t_sources([{"name": "t", "retention": 3600000}], max_age)
	lib.no_rule(unknown, "SW-REC-006")
	no_retention := deny with input as _t_sources([{"name": "t", "rewindable": true}], max_age)
	lib.no_rule(no_retention, "SW-REC-006")
	no_window := deny with input as _t_sources([{"name": "t", "rewindable": true, "retention": 3600000}], {})
	lib.no_rule(no_window, "SW-REC-006")
	no_section := deny with input as {"contract": {"job": {"name": "j", "sources": [{"name": "t", "rewindable": true, "retention": 3600000}]}}}
	lib.no_rule(no_section, "SW-REC-006")
}
