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

# identifier_fields: [] means none, as leaving it out does
_t004_none(facts) := object.union(
	json.remove(ice_input(facts), ["contract/table/properties"]),
	{"contract": {"table": {"identifier_fields": []}}},
)
