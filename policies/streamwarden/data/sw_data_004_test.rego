package streamwarden.data

import rego.v1

import data.streamwarden.lib

test_data004_mismatch_warns if {
	snap := _t_snap(true, {"added-records": 1000}, {"added-records": 990}, ["added-records"])
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-DATA-004") == {"table.identifier"}
	some f in findings
	contains(f.message, "snapshot 6907359049413089437 (append)")
	contains(f.message, "added-records = 1000 in its summary, but the files it added hold 990")
}

test_data004_matching_counts_pass if {
	snap := _t_snap(true, {"added-records": 5}, {"added-records": 5}, [])
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-DATA-004")
}

test_data004_not_comparable_is_skipped if {
	snap := _t_snap(false, {"added-records": 5}, {"added-records": 2}, [])
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	lib.no_rule(findings, "SW-DATA-004")
}

test_data004_one_finding_per_mismatched_count if {
	snap := _t_snap(
		true,
		{"added-records": 5, "added-position-deletes": 2},
		{"added-records": 4, "added-position-deletes": 1},
		["added-records", "added-position-deletes"],
	)
	inp := _t_input({}, _t_data({"snapshots": [snap]}))
	findings := warn with input as inp
	count([f | some f in findings; f.rule == "SW-DATA-004"]) == 2
}

test_data004_silent_when_unavailable if {
	snap := _t_snap(true, {"added-records": 1}, {"added-records": 0}, ["added-records"])
	inp := _t_input({}, {"available": false, "configured": true, "snapshots": [snap]})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-DATA-004")
}
