package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- a clean table passes

test_ice_clean_table_passes_every_live_retention_rule if {
	inp := _t_ice({})
	denied := deny with input as inp
	warned := warn with input as inp
	# SW-RET-002 is the example contract's own (contract side, waived there)
	{f.rule | some f in denied} == {"SW-RET-002"}
	count(warned) == 0
}

_t_retention(savepoints, snapshots) := {"contract": {"retention": {
	"savepoints": {"max_age": savepoints},
	"snapshots": {"max_age": snapshots},
}}}

# ---------------------------------------------------------------- SW-RET-002

test_ret002_example_contract_keeps_savepoints_longer if {
	# the example contract breaks SW-RET-002 on purpose (and waives it)
	inp := lib.example_input
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-RET-002"
	f.path == "retention.savepoints.max_age"
	f.evidence == {"savepoints_max_age": 2592000000, "snapshots_max_age": 604800000}
	contains(f.message, "retention.savepoints.max_age (30d) is longer than retention.snapshots.max_age (7d)")
}

test_ret002_equal_ages_pass if {
	inp := _t_retention(604800000, 604800000)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-002")
}

test_ret002_one_ms_longer_fires if {
	inp := _t_retention(604800001, 604800000)
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-002") == {"retention.savepoints.max_age"}
}

test_ret002_shorter_savepoints_pass if {
	inp := _t_retention(86400000, 604800000)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-002")
}

test_ret002_needs_both_ages if {
	findings := deny with input as {"contract": {"retention": {"savepoints": {"max_age": 2592000000}}}}
	lib.no_rule(findings, "SW-RET-002")
}
