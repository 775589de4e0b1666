package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

_rgt_now := 1764000000000

_rgt_day := 86400000

_rgt_plan(extra) := object.union(
	{
		"status": "behind",
		"branch": "main",
		"job_id": "4d986ca01ddda5a426cdee76cc7caaf6",
		"checkpoint_id": 12,
		"behind": true,
		"max_committed_checkpoint_id": 20,
		"matching_snapshot": {"snapshot_id": 7012, "checkpoint_id": 12, "timestamp_ms": 1763990000000},
		"replay": {
			"snapshots": 8, "checkpoints": [13, 14, 15, 16, 17, 18, 19, 20], "first_checkpoint_id": 13,
			"last_checkpoint_id": 20, "added_records": 16, "added_data_files": 8,
		},
		"idempotence": {"idempotent": false, "upsert": false, "identifier_fields": [], "source": "table"},
		"rollback_target": null,
	},
	extra,
)

_rgt_sp(extra) := object.union(
	{
		"available": true,
		"configured": true,
		"location": "file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f",
		"kind": "savepoint",
		"checkpoint_id": 12,
		"completed_ms": _rgt_now - _rgt_day,
		"operators": [],
		"table": _rgt_plan({}),
	},
	extra,
)

_rgt_input(sp) := {
	"contract": lib.example_contract,
	"facts": object.union(lib.example_input.facts, {"savepoint": sp}),
	"now_ms": _rgt_now,
	"mode": "gate",
}

_rgt_with_plan(plan) := json.patch(_rgt_input(_rgt_sp({})), [{"op": "replace", "path": "/facts/savepoint/table", "value": plan}])

# ---------------------------------------------------------------- SW-REC-006 (restore side)

# a 7-day topic (limit 6d7h12m with the default margin) and its two partitions in the savepoint
_rgt_topic := {"job": {"name": "j", "sources": [
	{"name": "orders-topic", "kind": "kafka", "uid": "orders-source", "rewindable": true, "retention": 7 * _rgt_day},
	{"name": "rates", "rewindable": false, "retention": _rgt_day},
]}}

_rgt_parts := [
	{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 0, "offset": 1234, "position": "offset"},
	{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 1, "offset": null, "position": "earliest"},
	{"source": null, "operator_id": "cd", "topic": "other", "partition": 0, "offset": 5, "position": "offset"},
]

_rgt_kafka_input(completed) := {
	"contract": _rgt_topic,
	"facts": {"savepoint": _rgt_sp({"completed_ms": completed, "table": null, "kafka": {"sources": [], "partitions": _rgt_parts}})},
	"now_ms": _rgt_now,
	"mode": "gate",
}

# ---------------------------------------------------------------- helpers of this package's rules

test_offsets_text_lists_five_partitions_then_counts_the_rest if {
	_rg_offsets_text([]) == ""
	parts := [{"topic": "orders", "partition": i, "offset": i * 10} | some i in numbers.range(0, 6)]
	_rg_offsets_text(parts) == "; it resumes orders[0] at offset 0, orders[1] at offset 10, orders[2] at offset 20, orders[3] at offset 30, orders[4] at offset 40 and 2 more partitions"
	_rg_offsets_text([{"topic": "orders", "partition": 0, "position": "earliest"}]) == "; it resumes orders[0] at earliest"
}
