package streamwarden.retention

import rego.v1

import data.streamwarden.lib

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
