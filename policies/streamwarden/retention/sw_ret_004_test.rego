package streamwarden.retention

import rego.v1

import data.streamwarden.lib

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
