package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

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
