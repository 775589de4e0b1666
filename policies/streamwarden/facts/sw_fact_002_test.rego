package streamwarden.facts

import rego.v1

test_fact002_refused_table_is_an_error_at_its_identifier if {
	inp := {"facts": {"access": _t_access(false, "table.identifier"), "iceberg": _t_refused, "data": _t_refused}}
	findings := deny with input as inp
	count({f | some f in findings; f.rule == "SW-FACT-002"}) == 1
	some f in findings
	f == {
		"rule": "SW-FACT-002",
		"severity": "error",
		"message": "the environment does not let this contract read lake.sales.orders: no entry of iceberg.allow grants lake.sales.orders to owner 'web-analytics'; no facts of the table were gathered",
		"path": "table.identifier",
		"value": "lake.sales.orders",
		"evidence": {
			"catalog": "lake", "table": "sales.orders", "owner": "web-analytics",
			"reason": "no entry of iceberg.allow grants lake.sales.orders to owner 'web-analytics'",
		},
	}
}

test_fact002_refused_sections_are_no_fact001_gap if {
	inp := {"facts": {"access": _t_access(false, "table.identifier"), "iceberg": _t_refused, "data": _t_refused}}
	findings := warn with input as inp
	count(findings) == 0
}

test_fact002_refused_catalog_points_at_table_catalog if {
	inp := {"facts": {"access": _t_access(false, "table.catalog"), "iceberg": _t_refused}}
	some f in deny with input as inp
	f.rule == "SW-FACT-002"
	f.path == "table.catalog"
}

test_fact002_unknown_field_falls_back_to_the_identifier if {
	inp := {"facts": {"access": _t_access(false, "metadata.owner")}}
	some f in deny with input as inp
	f.rule == "SW-FACT-002"
	f.path == "table.identifier"
}

test_fact002_error_in_the_gate_too if {
	inp := {"mode": "gate", "facts": {"access": _t_access(false, "table.identifier"), "iceberg": _t_refused}}
	some f in deny with input as inp
	f.rule == "SW-FACT-002"
	f.severity == "error"
}

test_fact002_allowed_table_is_quiet if {
	inp := {"facts": {"access": object.union(_t_access(true, "table.identifier"), {"reason": "", "grant": "allow[0]"}), "iceberg": _t_ok}}
	findings := deny with input as inp
	count({f | some f in findings; f.rule == "SW-FACT-002"}) == 0
}

test_fact002_without_access_section_is_quiet if {
	findings := deny with input as {"facts": {"iceberg": _t_ok}}
	count({f | some f in findings; f.rule == "SW-FACT-002"}) == 0
}

test_fact002_blank_reason_still_reads if {
	inp := {"facts": {"access": object.union(_t_access(false, "table.identifier"), {"reason": ""})}}
	some f in deny with input as inp
	f.rule == "SW-FACT-002"
	contains(f.message, "lake.sales.orders: no error was reported;")
}
