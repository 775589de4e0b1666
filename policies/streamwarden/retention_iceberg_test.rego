package streamwarden.retention

import rego.v1

import data.streamwarden.lib
import data.streamwarden.table

_day := 86400000

# Bind the fixture to a local before `with input as` (see checkpoint_test.rego).
_t_ice(patch) := table.ice_input(patch)

_t_rules(findings, id) := [x | some x in findings; x.rule == id]

_t_kept(age, source) := {"retention": {"max_snapshot_age_ms": age, "max_snapshot_age_ms_source": source}}

# ---------------------------------------------------------------- a clean table passes

test_ice_clean_table_passes_every_live_retention_rule if {
	inp := _t_ice({})
	denied := deny with input as inp
	warned := warn with input as inp
	# SW-RET-002 is the example contract's own (contract side, waived there)
	{f.rule | some f in denied} == {"SW-RET-002"}
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-RET-001

test_ret001_default_five_days_below_both_promises if {
	inp := _t_ice(_t_kept(5 * _day, "default"))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-001") == {"retention.snapshots.max_age"}
	some f in findings
	f.rule == "SW-RET-001"
	f.source == "iceberg"
	f.evidence == {"max_snapshot_age_ms": 432000000, "source": "default", "promise": 604800000, "branch": "main"}
	contains(f.message, "keeps snapshots of branch main for 5d (history.expire.max-snapshot-age-ms, from Iceberg's default), shorter than retention.snapshots.max_age 7d")
}

test_ret001_shorter_than_rollback_window_too if {
	inp := _t_ice(_t_kept(2 * _day, "ref"))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-001") == {"retention.snapshots.max_age", "retention.rollback_window"}
	some f in findings
	f.path == "retention.rollback_window"
	contains(f.message, "from the branch ref")
}

test_ret001_equal_passes if {
	inp := _t_ice(_t_kept(7 * _day, "property"))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-001")
}

test_ret001_silent_without_promises if {
	inp := json.remove(_t_ice(_t_kept(_day, "property")), ["contract/retention"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-001")
}

# ---------------------------------------------------------------- SW-RET-003

test_ret003_min_keep_below_contract if {
	inp := _t_ice({"retention": {"min_snapshots_to_keep": 1, "min_snapshots_to_keep_source": "default"}})
	findings := warn with input as inp
	[f] := _t_rules(findings, "SW-RET-003")
	f.path == "retention.snapshots.min_keep"
	f.evidence == {"min_snapshots_to_keep": 1, "source": "default", "min_keep": 20}
}

test_ret003_equal_passes if {
	inp := _t_ice({"retention": {"min_snapshots_to_keep": 20}})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-RET-003")
}

# ---------------------------------------------------------------- SW-RET-004

# now_ms is 1764000000000; the table keeps 7d, so the limit is 14d
_t_oldest(age) := {"snapshots": {"oldest_unprotected": {"snapshot_id": 5001, "timestamp_ms": 1764000000000 - age}}}

test_ret004_expiry_not_running if {
	inp := _t_ice(_t_oldest(40 * _day))
	findings := deny with input as inp
	[f] := _t_rules(findings, "SW-RET-004")
	f.evidence.snapshot_id == 5001
	f.evidence.allowed_ms == 7 * _day
	contains(f.message, "is 40d old, more than twice the 7d retention")
}

test_ret004_boundary_twice_passes if {
	inp := _t_ice(_t_oldest(14 * _day))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-004")
	inp2 := _t_ice(_t_oldest((14 * _day) + 1))
	findings2 := deny with input as inp2
	lib.rule_paths(findings2, "SW-RET-004") == {"retention.snapshots.max_age"}
}

test_ret004_longer_contract_promise_raises_the_limit if {
	contract := object.union(lib.example_contract, {"retention": {"rollback_window": 30 * _day}})
	inp := object.union(_t_ice(_t_oldest(40 * _day)), {"contract": contract})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-004")
}

test_ret004_only_protected_snapshots_pass if {
	inp := _t_ice({"snapshots": {"oldest_unprotected": null}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-004")
}

# ---------------------------------------------------------------- SW-RET-006

test_ret006_default_false_fires if {
	inp := _t_ice({"properties": {"write.metadata.delete-after-commit.enabled": "false"}})
	findings := warn with input as inp
	[f] := _t_rules(findings, "SW-RET-006")
	f.path == `table.properties["write.metadata.delete-after-commit.enabled"]`
	f.source == "iceberg"
}

test_ret006_true_in_capitals_passes if {
	inp := _t_ice({"properties": {"write.metadata.delete-after-commit.enabled": "TRUE"}})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-RET-006")
}

test_ret006_silent_without_facts if {
	inp := lib.example_input
	findings := warn with input as inp
	lib.no_rule(findings, "SW-RET-006")
}
