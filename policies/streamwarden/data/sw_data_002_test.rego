package streamwarden.data

import rego.v1

import data.streamwarden.lib

test_data002_duplicates_fire_with_samples if {
	samples := [{"key": {"order_id": 42}, "count": 2}, {"key": {"order_id": 7}, "count": 2}]
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": _t_unique(2, samples)}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-002") == {"quality.unique"}
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "2 value(s) of (order_id) occur more than once")
	contains(f.message, "(order_id=42) x2")
	f.evidence.samples == samples
}

test_data002_values_not_shown_gives_counts_only if {
	fact := object.union(_t_unique(3, []), {"values_shown": false})
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "3 value(s) of (order_id) occur more than once")
	contains(f.message, "values not shown (the environment's iceberg.data.show_values is off)")
	not contains(f.message, "e.g.")
	f.evidence.samples == []
}

test_data002_values_shown_true_lists_samples if {
	samples := [{"key": {"order_id": 42}, "count": 2}]
	fact := object.union(_t_unique(1, samples), {"values_shown": true})
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "e.g. (order_id=42) x2")
	not contains(f.message, "values not shown")
}

test_data002_no_duplicates_pass if {
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": _t_unique(0, [])}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-002")
}

test_data002_one_duplicate_fires if {
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": _t_unique(1, [])}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-DATA-002") == {"quality.unique"}
}

test_data002_compound_key if {
	fact := {"columns": ["order_id", "line"], "missing": [], "duplicate_keys": 1, "duplicate_rows": 2,
		"samples": [{"key": {"order_id": 1, "line": "a"}, "count": 3}]}
	inp := _t_input({"unique": ["order_id", "line"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "(order_id, line)")
	contains(f.message, "(line=a, order_id=1) x3")
}

test_data002_missing_key_column_fires if {
	fact := {"columns": ["order_id"], "missing": ["order_id"], "duplicate_keys": null, "duplicate_rows": null, "samples": []}
	inp := _t_input({"unique": ["order_id"]}, _t_data({"unique": fact}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-DATA-002"
	contains(f.message, "uniqueness cannot be proven")
}

test_data002_facts_for_other_key_ignored if {
	inp := _t_input({"unique": ["customer_id"]}, _t_data({"unique": _t_unique(3, [])}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-002")
}

test_data002_silent_when_unavailable if {
	inp := _t_input({"unique": ["order_id"]}, {"available": false, "configured": true, "unique": _t_unique(3, [])})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-DATA-002")
}
