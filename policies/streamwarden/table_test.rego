package streamwarden.table

import rego.v1

import data.streamwarden.lib

# Bind the result to a local before `with input as` (see checkpoint_test.rego).
_t_with(patch) := {"contract": object.union(lib.example_contract, patch)}

_t_without(paths) := {"contract": json.remove(lib.example_contract, paths)}

_t_freshness(interval, slack, freshness) := {"contract": {
	"metadata": {"consumers": [{"name": "fraud-features", "freshness": freshness, "contact": "x@example.com"}]},
	"checkpoint": {"interval": interval},
	"table": {"commit": {"max_interval": slack}},
}}

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_table_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	count(denied) == 0
}

# ---------------------------------------------------------------- SW-TABLE-004

test_table004_upsert_without_identifier_fields if {
	inp := _t_without(["table/identifier_fields"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-004"
	f.path == "table.identifier_fields"
	f.evidence == {"write.upsert.enabled": "true", "identifier_fields": null}
}

test_table004_suggests_a_required_primitive_column_of_the_contract if {
	inp := _t_with({"table": {
		"identifier_fields": [],
		"schema": [
			{"name": "amount", "type": "double", "required": true},
			{"name": "note", "type": "string"},
			{"name": "tags", "type": "list<string>", "required": true},
			{"name": "invoice_id", "type": "long", "required": true},
		],
	}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-004"
	endswith(f.message, "identify a row (for example [invoice_id])")
}

test_table004_suggests_nothing_without_a_candidate if {
	inp := {"contract": {"table": {"properties": {"write.upsert.enabled": "true"}, "schema": [{"name": "x", "type": "double", "required": true}]}}}
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-004"
	endswith(f.message, "required primitive columns of table.schema that identify a row")
}

test_table004_upsert_with_empty_identifier_fields if {
	inp := _t_with({"table": {"identifier_fields": []}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-004") == {"table.identifier_fields"}
}

test_table004_upsert_written_in_capitals_or_as_boolean if {
	findings_upper := deny with input as {"contract": {"table": {"properties": {"write.upsert.enabled": "TRUE"}}}}
	lib.rule_paths(findings_upper, "SW-TABLE-004") == {"table.identifier_fields"}
	findings_bool := deny with input as {"contract": {"table": {"properties": {"write.upsert.enabled": true}}}}
	lib.rule_paths(findings_bool, "SW-TABLE-004") == {"table.identifier_fields"}
}

test_table004_upsert_disabled_passes if {
	findings := deny with input as {"contract": {"table": {"properties": {"write.upsert.enabled": "false"}}}}
	lib.no_rule(findings, "SW-TABLE-004")
}

test_table004_no_properties_passes if {
	findings := deny with input as {"contract": {"table": {"identifier": "sales.orders"}}}
	lib.no_rule(findings, "SW-TABLE-004")
}

# ---------------------------------------------------------------- SW-TABLE-006

test_table006_consumer_promised_more_than_deliverable if {
	inp := _t_freshness(60000, 300000, 300000)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-006"
	f.path == "metadata.consumers[0].freshness"
	f.evidence == {
		"consumer": "fraud-features", "freshness": 300000, "checkpoint_interval": 60000,
		"commit_max_interval": 300000, "deliverable": 360000,
	}
	contains(f.message, `consumer "fraud-features" was promised freshness 5m but the pipeline delivers at best 6m (checkpoint.interval 1m + table.commit.max_interval 5m)`)
}

test_table006_equal_is_deliverable if {
	inp := _t_freshness(60000, 300000, 360000)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-006")
}

test_table006_one_ms_short_fires if {
	inp := _t_freshness(60000, 300000, 359999)
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-006") == {"metadata.consumers[0].freshness"}
}

test_table006_without_commit_slack if {
	findings := deny with input as {"contract": {
		"metadata": {"consumers": [{"name": "a", "freshness": 60000}, {"name": "b", "freshness": 59999}]},
		"checkpoint": {"interval": 60000},
	}}
	lib.rule_paths(findings, "SW-TABLE-006") == {"metadata.consumers[1].freshness"}
	some f in findings
	f.evidence.commit_max_interval == 0
}

test_table006_one_finding_per_consumer if {
	inp := _t_with({"checkpoint": {"interval": 3600000}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-006") == {"metadata.consumers[0].freshness", "metadata.consumers[1].freshness"}
}

test_table006_consumer_without_freshness_passes if {
	findings := deny with input as {"contract": {"metadata": {"consumers": [{"name": "a"}]}, "checkpoint": {"interval": 60000}}}
	lib.no_rule(findings, "SW-TABLE-006")
}

test_table006_without_interval_is_silent if {
	inp := _t_without(["checkpoint/interval"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-006")
}

test_upsert_enabled_helper if {
	upsert_enabled({"write.upsert.enabled": "True"})
	not upsert_enabled({"write.upsert.enabled": "no"})
	not upsert_enabled({})
}
