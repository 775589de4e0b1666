package streamwarden.table

import rego.v1

import data.streamwarden.lib

# Live facts of a table that matches lib.example_contract exactly (docs/facts-iceberg.md shape).
# The retention, schema and lineage tests reuse it as data.streamwarden.table.ice_clean_facts.
ice_job_a := "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"

ice_job_b := "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"

ice_op := "0123456789abcdef0123456789abcdef"

ice_fields := [
	{"id": 1, "name": "order_id", "type": "long", "required": true},
	{"id": 2, "name": "customer_id", "type": "long", "required": true},
	{"id": 3, "name": "amount", "type": "decimal(12,2)", "required": false},
	{"id": 4, "name": "currency", "type": "string", "required": false, "initial_default": "EUR"},
	{"id": 5, "name": "event_time", "type": "timestamptz", "required": true},
]

_ice_schema_1 := {"schema_id": 1, "fields": ice_fields, "identifier_field_ids": [1], "identifier_fields": ["order_id"]}

# schema 0: before currency was added
_ice_schema_0 := {
	"schema_id": 0,
	"fields": [f | some f in ice_fields; f.id != 4],
	"identifier_field_ids": [1],
	"identifier_fields": ["order_id"],
}

ice_head := {
	"snapshot_id": 5003,
	"parent_id": 5002,
	"sequence_number": 3,
	"timestamp_ms": 1763999940000,
	"operation": "append",
	"schema_id": 1,
	"summary": {"operation": "append", "flink.job-id": ice_job_a, "flink.operator-id": ice_op, "flink.max-committed-checkpoint-id": "12"},
	"job_id": ice_job_a,
	"operator_id": ice_op,
	"checkpoint_id": 12,
}

ice_clean_facts := {
	"available": true,
	"configured": true,
	"catalog": "lake",
	"identifier": "sales.orders",
	"format_version": 2,
	"schema": _ice_schema_1,
	"schemas": [_ice_schema_1, _ice_schema_0],
	"partition_spec": {"spec_id": 0, "fields": [{"source": "event_time", "source_id": 5, "transform": "day", "name": "event_time_day", "field_id": 1000}]},
	"properties": {
		"write.upsert.enabled": "true",
		"history.expire.max-snapshot-age-ms": "604800000",
		"history.expire.min-snapshots-to-keep": "20",
		"write.metadata.delete-after-commit.enabled": "true",
	},
	"properties_defaulted": [],
	"refs": {"main": {"type": "branch", "snapshot_id": 5003, "min_snapshots_to_keep": null, "max_snapshot_age_ms": null, "max_ref_age_ms": null}},
	"branch": "main",
	"branch_exists": true,
	"retention": {
		"max_snapshot_age_ms": 604800000,
		"max_snapshot_age_ms_source": "property",
		"min_snapshots_to_keep": 20,
		"min_snapshots_to_keep_source": "property",
	},
	"snapshots": {
		"total": 3,
		"head": ice_head,
		"oldest": {"snapshot_id": 5001, "timestamp_ms": 1763740800000},
		"oldest_unprotected": {"snapshot_id": 5001, "timestamp_ms": 1763740800000},
		"items": [ice_head],
	},
	"lineage": {
		"snapshots": 3,
		"with_lineage": 3,
		"jobs": [ice_job_a],
		"groups": [],
		"duplicates": [],
		"backwards": [],
		"interleavings": [],
		"missing_lineage": [],
		"out_of_band": [],
		"truncated": {},
	},
	"files": {"scanned": true, "duplicates": []},
}

# The example input with the live facts deep-merged with `patch` (arrays are replaced).
ice_input(patch) := object.union(lib.example_input, {"facts": {"iceberg": object.union(ice_clean_facts, patch)}})

# The example input with the contract deep-merged with `cpatch` and the facts with `fpatch`.
ice_input2(cpatch, fpatch) := object.union(ice_input(fpatch), {"contract": object.union(lib.example_contract, cpatch)})

ice_rules(findings, id) := [f | some f in findings; f.rule == id]

_t_live_fields(fields) := {"schema": object.union(_ice_schema_1, {"fields": fields})}

# ---------------------------------------------------------------- a clean table passes

test_ice_clean_table_passes_every_table_rule if {
	inp := ice_input({})
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

test_ice_unavailable_facts_are_silent if {
	inp := object.union(lib.example_input, {"facts": {"iceberg": {"available": false, "configured": true, "error": "boom"}}})
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-TABLE-001

test_table001_type_differs if {
	fields := [object.union(f, {"type": "decimal(14,2)"}) | some f in ice_fields; f.id == 3]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 3], fields)))
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-001")
	f.path == "table.schema[2].type"
	f.source == "iceberg"
	f.evidence.contract == "decimal(12,2)"
	f.evidence.live == "decimal(14,2)"
	contains(f.message, `has type "decimal(14,2)", the contract "decimal(12,2)"`)
}

test_table001_required_differs if {
	fields := [object.union(f, {"required": false}) | some f in ice_fields; f.id == 2]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 2], fields)))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[1].required"}
}

test_table001_missing_and_extra_fields if {
	extra := {"id": 6, "name": "discount", "type": "double", "required": false}
	live := array.concat([f | some f in ice_fields; f.id != 4], [extra])
	inp := ice_input(_t_live_fields(live))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[3]", "table.schema"}
	some f in findings
	f.path == "table.schema"
	f.value == "discount"
	contains(f.message, "has field discount (id 6, optional double) that table.schema does not declare")
}

test_table001_rename_by_id if {
	renamed := [object.union(f, {"name": "total"}) | some f in ice_fields; f.id == 3]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 3], renamed)))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[2].name"}
}

test_table001_field_matched_by_name_with_another_id if {
	moved := [object.union(f, {"id": 9}) | some f in ice_fields; f.id == 4]
	inp := ice_input(_t_live_fields(array.concat([f | some f in ice_fields; f.id != 4], moved)))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-001") == {"table.schema[3].id"}
}

test_table001_contract_without_ids_matches_by_name if {
	cfields := [json.remove(f, ["id"]) | some f in lib.example_contract.table.schema]
	inp := ice_input2({"table": {"schema": cfields}}, {})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-001")
}

test_table001_silent_when_contract_matches_an_older_schema if {
	# the table evolved out of band to schema 1; SW-SCHEMA-008 reports it, not SW-TABLE-001
	cfields := [f | some f in lib.example_contract.table.schema; f.id != 4]
	inp := ice_input2({"table": {"schema": cfields}}, {})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-001")
}

test_table001_silent_without_contract_schema if {
	inp := json.remove(ice_input({}), ["contract/table/schema"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-001")
}

# ---------------------------------------------------------------- SW-TABLE-002

test_table002_other_transform if {
	inp := ice_input({"partition_spec": {"spec_id": 1, "fields": [{"source": "event_time", "source_id": 5, "transform": "hour", "name": "h", "field_id": 1001}]}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-002") == {"table.partition_spec[0]", "table.partition_spec"}
	some f in findings
	f.path == "table.partition_spec[0]"
	contains(f.message, "partition field day(event_time) is declared but not in the live partition spec")
	contains(f.message, "spec id 1: hour(event_time)")
}

test_table002_unpartitioned_table if {
	inp := ice_input({"partition_spec": {"spec_id": 0, "fields": []}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-002") == {"table.partition_spec[0]"}
}

test_table002_extra_live_field if {
	extra := {"source": "customer_id", "source_id": 2, "transform": "bucket[16]", "name": "b", "field_id": 1001}
	inp := ice_input({"partition_spec": {"spec_id": 2, "fields": array.concat(ice_clean_facts.partition_spec.fields, [extra])}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-002")
	f.path == "table.partition_spec"
	f.value == "customer_id:bucket[16]"
}

test_table002_order_differs if {
	two := [{"source": "event_time", "transform": "day"}, {"source": "customer_id", "transform": "bucket[16]"}]
	live := [
		{"source": "customer_id", "source_id": 2, "transform": "bucket[16]", "name": "b", "field_id": 1001},
		{"source": "event_time", "source_id": 5, "transform": "day", "name": "d", "field_id": 1000},
	]
	inp := ice_input2({"table": {"partition_spec": two}}, {"partition_spec": {"spec_id": 3, "fields": live}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-002")
	f.value == "order"
}

test_table002_void_fields_are_removed_fields if {
	void := {"source": "customer_id", "source_id": 2, "transform": "void", "name": "b", "field_id": 1001}
	inp := ice_input({"partition_spec": {"spec_id": 2, "fields": array.concat(ice_clean_facts.partition_spec.fields, [void])}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-002")
}

test_table002_silent_without_contract_spec if {
	inp := json.remove(ice_input({"partition_spec": {"spec_id": 0, "fields": []}}), ["contract/table/partition_spec"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-002")
}

# ---------------------------------------------------------------- SW-TABLE-003

test_table003_format_below_contract if {
	inp := ice_input2({"table": {"format_version": 3}}, {})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-003")
	f.path == "table.format_version"
	f.evidence == {"contract": 3, "live": 2}
}

test_table003_upsert_on_v1 if {
	inp := ice_input2({"table": {"format_version": 1}}, {"format_version": 1})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-003")
	f.value == "upsert-on-v1"
	contains(f.message, "format v1")
}

test_table003_v1_without_upsert_passes if {
	inp := ice_input2({"table": {"format_version": 1, "properties": {"write.upsert.enabled": "false"}}}, {"format_version": 1, "properties": {"write.upsert.enabled": "false"}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-003")
}

test_table003_newer_table_passes if {
	inp := ice_input({"format_version": 3})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-003")
}

# ---------------------------------------------------------------- SW-TABLE-004 (live body)

test_table004_live_identifier_fields_differ if {
	inp := ice_input({"schema": object.union(_ice_schema_1, {"identifier_field_ids": [2], "identifier_fields": ["customer_id"]})})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-004")
	f.source == "iceberg"
	f.evidence == {"contract": ["order_id"], "live": ["customer_id"]}
}

test_table004_live_without_identifier_fields if {
	inp := ice_input({"schema": object.union(_ice_schema_1, {"identifier_field_ids": [], "identifier_fields": []})})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-004") == {"table.identifier_fields"}
}

test_table004_live_upsert_without_ids_when_contract_declares_none if {
	facts := {"schema": object.union(_ice_schema_1, {"identifier_field_ids": [], "identifier_fields": []})}
	inp := json.remove(ice_input(facts), ["contract/table/identifier_fields", "contract/table/properties"])
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-004")
	f.value == "live-upsert-without-identifier"
}

# identifier_fields: [] means none, as leaving it out does
_t004_none(facts) := object.union(
	json.remove(ice_input(facts), ["contract/table/properties"]),
	{"contract": {"table": {"identifier_fields": []}}},
)

test_table004_an_empty_list_declares_none_and_the_live_fields_are_not_compared if {
	inp := _t004_none({})
	inp.contract.table.identifier_fields == []
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-004")
}

test_table004_an_empty_list_with_a_live_upsert_table_without_ids if {
	inp := _t004_none({"schema": object.union(_ice_schema_1, {"identifier_field_ids": [], "identifier_fields": []})})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-004")
	f.value == "live-upsert-without-identifier"
}

test_table004_same_fields_in_another_order_pass if {
	inp := ice_input2({"table": {"identifier_fields": ["order_id", "customer_id"]}}, {"schema": object.union(_ice_schema_1, {"identifier_field_ids": [2, 1], "identifier_fields": ["customer_id", "order_id"]})})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-004")
}

# ---------------------------------------------------------------- SW-TABLE-013

test_table013_property_differs if {
	inp := ice_input({"properties": {"write.upsert.enabled": "false"}})
	findings := warn with input as inp
	[f] := ice_rules(findings, "SW-TABLE-013")
	f.path == `table.properties["write.upsert.enabled"]`
	f.evidence == {"property": "write.upsert.enabled", "contract": "true", "live": "false", "defaulted": false}
}

test_table013_property_absent_live if {
	inp := ice_input2({"table": {"properties": {"write.upsert.enabled": "true", "write.parquet.compression-codec": "zstd"}}}, {})
	findings := warn with input as inp
	[f] := ice_rules(findings, "SW-TABLE-013")
	f.evidence.live == null
	contains(f.message, "is null on the live table")
}

test_table013_booleans_compare_case_insensitively if {
	inp := ice_input({"properties": {"write.upsert.enabled": "TRUE"}})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-TABLE-013")
}

test_table013_default_counts_as_live_value if {
	props := {"write.upsert.enabled": "true", "history.expire.min-snapshots-to-keep": "1"}
	inp := ice_input2({"table": {"properties": props}}, {"properties": {"history.expire.min-snapshots-to-keep": "1"}, "properties_defaulted": ["history.expire.min-snapshots-to-keep"]})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-TABLE-013")
}
