package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

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
