package streamwarden.waiver

import rego.v1

import data.streamwarden.lib

_t_catalog := ["SW-CKPT-001", "SW-RET-002", "SW-WAIVER-001"]

# 2027-12-31 is valid through that day: expires_end_ms is 2028-01-01T00:00:00Z.
_t_end_ms := 1830297600000

_t_waiver := {
	"rule": "SW-RET-002",
	"reason": "savepoint bucket migration",
	"expires": "2027-12-31",
	"expires_end_ms": _t_end_ms,
	"approved_by": "data-platform",
}

_t_input(waivers, now_ms) := {"contract": {"waivers": waivers}, "now_ms": now_ms}

# ---------------------------------------------------------------- valid waivers

test_example_contract_waiver_is_valid if {
	inp := lib.example_input
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	count(findings) == 0
}

test_valid_waiver_on_its_last_millisecond if {
	inp := _t_input([_t_waiver], _t_end_ms - 1)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	count(findings) == 0
}

test_approved_by_is_optional if {
	inp := _t_input([object.remove(_t_waiver, ["approved_by"])], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	count(findings) == 0
}

test_no_waivers_no_findings if {
	findings := deny with input as {"contract": {}, "now_ms": 0} with data.catalog.rule_ids as _t_catalog
	count(findings) == 0
}

# ---------------------------------------------------------------- SW-WAIVER-001: expired

test_waiver001_expired_at_end_of_day if {
	inp := _t_input([_t_waiver], _t_end_ms)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.rule == "SW-WAIVER-001"
	f.path == "waivers[0].expires"
	f.evidence == {
		"waiver_index": 0, "rule": "SW-RET-002", "problem": "expired", "expires": "2027-12-31",
		"expires_end_ms": _t_end_ms, "now_ms": _t_end_ms,
	}
	contains(f.message, "waiver 0 for SW-RET-002 expired on 2027-12-31")
	count(findings) == 1
}

test_waiver001_expired_long_ago if {
	inp := _t_input([_t_waiver, _t_waiver], _t_end_ms + 86400000)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	lib.rule_paths(findings, "SW-WAIVER-001") == {"waivers[0].expires", "waivers[1].expires"}
	{f.evidence.waiver_index | some f in findings} == {0, 1}
}

test_waiver001_expiry_needs_now_ms if {
	findings := deny with input as {"contract": {"waivers": [_t_waiver]}} with data.catalog.rule_ids as _t_catalog
	count(findings) == 0
}

# ---------------------------------------------------------------- SW-WAIVER-001: no reason

test_waiver001_no_reason if {
	inp := _t_input([object.remove(_t_waiver, ["reason"])], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.rule == "SW-WAIVER-001"
	f.path == "waivers[0].reason"
	f.evidence == {"waiver_index": 0, "rule": "SW-RET-002", "problem": "no_reason"}
	count(findings) == 1
}

test_waiver001_blank_reason if {
	inp := _t_input([_t_waiver, object.union(_t_waiver, {"reason": "   "})], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	lib.rule_paths(findings, "SW-WAIVER-001") == {"waivers[1].reason"}
	some f in findings
	f.evidence.waiver_index == 1
}

# ---------------------------------------------------------------- SW-WAIVER-001: no expires

test_waiver001_no_expires if {
	inp := _t_input([object.remove(_t_waiver, ["expires", "expires_end_ms"])], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.rule == "SW-WAIVER-001"
	f.path == "waivers[0].expires"
	f.evidence == {"waiver_index": 0, "rule": "SW-RET-002", "problem": "no_expires"}
	contains(f.message, "has no expires date")
	count(findings) == 1
}

# ---------------------------------------------------------------- SW-WAIVER-001: unknown rule

test_waiver001_unknown_rule if {
	inp := _t_input([object.union(_t_waiver, {"rule": "SW-CKPT-999"})], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.rule == "SW-WAIVER-001"
	f.path == "waivers[0].rule"
	f.evidence == {"waiver_index": 0, "rule": "SW-CKPT-999", "problem": "unknown_rule"}
	contains(f.message, `names rule "SW-CKPT-999", which no loaded policy defines`)
}

test_waiver001_unknown_rule_without_a_near_id_has_no_guess if {
	inp := _t_input([object.union(_t_waiver, {"rule": "SW-CKPT-999"})], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.rule == "SW-WAIVER-001"
	endswith(f.message, "fix the rule id")
}

test_waiver001_unknown_rule_names_the_near_known_id if {
	every written in ["SW-RET-02", "SW-RET-2", "sw-ret-002", "SW_RET_002", " SW-RET-0002 "] {
		_t_guess(written) == "SW-RET-002"
	}
}

_t_guess(written) := guess if {
	inp := _t_input([object.union(_t_waiver, {"rule": written})], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	[f] := [x | some x in findings; x.path == "waivers[0].rule"]
	f.evidence == {"waiver_index": 0, "rule": written, "problem": "unknown_rule"}
	endswith(f.message, "fix the rule id (did you mean SW-RET-002?)")
	guess := "SW-RET-002"
}

test_waiver001_a_rule_that_is_not_a_string_gets_no_guess if {
	inp := _t_input([object.union(_t_waiver, {"rule": 2})], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.path == "waivers[0].rule"
	endswith(f.message, "fix the rule id")
}

test_waiver001_rule_ids_are_case_sensitive if {
	inp := _t_input([object.union(_t_waiver, {"rule": "sw-ret-002"})], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	lib.rule_paths(findings, "SW-WAIVER-001") == {"waivers[0].rule"}
}

test_waiver001_missing_rule if {
	inp := _t_input([object.remove(_t_waiver, ["rule"])], 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.path == "waivers[0].rule"
	f.evidence.rule == null
}

test_waiver001_unknown_rule_needs_the_catalog if {
	inp := _t_input([object.union(_t_waiver, {"rule": "SW-CKPT-999"})], 0)
	findings := deny with input as inp with data.catalog as {}
	lib.no_rule(findings, "SW-WAIVER-001")
}

test_waiver001_every_problem_is_its_own_finding if {
	inp := _t_input([{"rule": "SW-NOPE-001", "reason": ""}, {"expires": "2020-01-01", "expires_end_ms": 1577923200000}], _t_end_ms)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	lib.rule_paths(findings, "SW-WAIVER-001") == {
		"waivers[0].rule", "waivers[0].reason", "waivers[0].expires",
		"waivers[1].rule", "waivers[1].reason", "waivers[1].expires",
	}
	count(findings) == 6
	some f in findings
	f.path == "waivers[1].reason"
	contains(f.message, "waiver 1 without a rule has no reason")
}

# ---------------------------------------------------------------- SW-WAIVER-001: beyond the horizon

_t_year_ms := 31536000000 # 365d, the default waivers.max_horizon

_t_config(horizon) := {"waivers": {"max_horizon_ms": horizon}}

_t_horizon_input(waivers, now_ms, horizon) := object.union(_t_input(waivers, now_ms), {"config": _t_config(horizon)})

test_waiver001_beyond_the_horizon if {
	# 9999-12-31 ends at 10000-01-01T00:00:00Z
	far := object.union(_t_waiver, {"expires": "9999-12-31", "expires_end_ms": 253402300800000})
	inp := _t_horizon_input([far], 1764000000000, _t_year_ms)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.rule == "SW-WAIVER-001"
	f.path == "waivers[0].expires"
	f.evidence == {
		"waiver_index": 0, "rule": "SW-RET-002", "problem": "beyond_horizon", "expires": "9999-12-31",
		"expires_end_ms": 253402300800000, "max_horizon_ms": _t_year_ms,
	}
	contains(f.message, "waiver 0 for SW-RET-002 expires on 9999-12-31, more than waivers.max_horizon (365d) ahead: it waives nothing")
	count(findings) == 1
}

test_waiver001_horizon_edge if {
	# the expires day begins exactly at now + horizon: valid; a millisecond later it is not
	now := 1764000000000
	at_edge := object.union(_t_waiver, {"expires_end_ms": (now + _t_year_ms) + 86400000})
	inp := _t_horizon_input([at_edge], now, _t_year_ms)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	count(findings) == 0
	past_edge := object.union(_t_waiver, {"expires_end_ms": (now + _t_year_ms) + 86400001})
	inp2 := _t_horizon_input([at_edge, past_edge], now, _t_year_ms)
	findings2 := deny with input as inp2 with data.catalog.rule_ids as _t_catalog
	lib.rule_paths(findings2, "SW-WAIVER-001") == {"waivers[1].expires"}
}

test_waiver001_horizon_is_configurable if {
	# 2027-12-31 begins 31 days after now: refused under 30d, valid under 10000d
	inp := _t_horizon_input([_t_waiver], _t_end_ms - 32 * 86400000, 30 * 86400000)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	some f in findings
	f.evidence.problem == "beyond_horizon"
	contains(f.message, "more than waivers.max_horizon (30d) ahead")
	inp2 := _t_horizon_input([_t_waiver], _t_end_ms - 32 * 86400000, 10000 * 86400000)
	findings2 := deny with input as inp2 with data.catalog.rule_ids as _t_catalog
	count(findings2) == 0
}

test_waiver001_horizon_needs_the_setting_and_now if {
	far := object.union(_t_waiver, {"expires": "9999-12-31", "expires_end_ms": 253402300800000})
	without_config := _t_input([far], 0)
	f1 := deny with input as without_config with data.catalog.rule_ids as _t_catalog
	count(f1) == 0
	not_a_number := _t_horizon_input([far], 0, "365d")
	f2 := deny with input as not_a_number with data.catalog.rule_ids as _t_catalog
	count(f2) == 0
	without_now := {"contract": {"waivers": [far]}, "config": _t_config(_t_year_ms)}
	f3 := deny with input as without_now with data.catalog.rule_ids as _t_catalog
	count(f3) == 0
}

test_waiver001_an_expired_waiver_is_not_also_beyond_the_horizon if {
	inp := _t_horizon_input([_t_waiver], _t_end_ms + 1, 0)
	findings := deny with input as inp with data.catalog.rule_ids as _t_catalog
	{f.evidence.problem | some f in findings} == {"expired"}
}

# ---------------------------------------------------------------- SW-WAIVER-001: cannot be waived

test_the_fail_closed_rules_cannot_be_waived if {
	every rule in ["SW-FACT-001", "SW-FACT-002", "SW-POLICY-001", "SW-WAIVER-001", "SW-WAIVER-002"] {
		rule in object.keys(unwaivable)
	}
	count(unwaivable) == 5
}

test_waiver001_a_fail_closed_rule_is_refused_with_its_reason if {
	every rule, why in unwaivable {
		w := object.union(_t_waiver, {"rule": rule, "reason": "Iceberg catalog flaky"})
		inp := _t_input([_t_waiver, w], 0)
		findings := deny with input as inp with data.catalog.rule_ids as array.concat(_t_catalog, [rule])
		[f] := [x | some x in findings; x.rule == "SW-WAIVER-001"]
		f.path == "waivers[1].rule"
		f.value == rule
		f.evidence == {"waiver_index": 1, "rule": rule, "problem": "unwaivable"}
		contains(f.message, sprintf("waiver 1 names %s, which cannot be waived: %s. The waiver waives nothing", [rule, why]))
	}
}

test_waiver001_facts_gaps_are_refused_as_the_gate_fails_closed_on_them if {
	w := object.union(_t_waiver, {"rule": "SW-FACT-001", "reason": "Iceberg catalog flaky"})
	inp := _t_input([w], 0)
	findings := deny with input as inp with data.catalog.rule_ids as ["SW-FACT-001"]
	some f in findings
	contains(f.message, "the gate fails closed on it")
}

test_waiver001_rule_ids_that_only_resemble_a_fail_closed_one_are_not_refused_as_such if {
	every written in ["sw-fact-001", "SW-FACT-01", " SW-FACT-001"] {
		w := object.union(_t_waiver, {"rule": written})
		inp := _t_input([w], 0)
		findings := deny with input as inp with data.catalog.rule_ids as ["SW-FACT-001"]
		{f.evidence.problem | some f in findings} == {"unknown_rule"}
	}
}
