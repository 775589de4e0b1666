package streamwarden.table

import rego.v1

# Fixtures (ice_clean_facts, ice_input, ice_input2, ice_rules, ice_job_a/b, ice_op) live in
# iceberg_test.rego.

_t_lineage(patch) := ice_input({"lineage": patch})

_t_flink(flink) := object.union(ice_input({"snapshots": {"head": object.union(ice_head, {"timestamp_ms": 1763990000000})}}), {"facts": {"flink": flink}})

# ---------------------------------------------------------------- SW-TABLE-007

_t_missing := {"missing": ["flink.operator-id"], "job_id": ice_job_a, "operation": "append", "count": 2, "snapshot_ids": [5002, 5003]}

# ---------------------------------------------------------------- SW-TABLE-009

_t_back(kind, prev_job) := {
	"kind": kind,
	"job_id": ice_job_b,
	"operator_id": ice_op,
	"snapshot_id": 5003,
	"checkpoint_id": 8,
	"previous_job_id": prev_job,
	"previous_snapshot_id": 5002,
	"previous_checkpoint_id": 12,
}

# ---------------------------------------------------------------- SW-TABLE-010

_t_pair(declared_by) := {
	"job_ids": [ice_job_a, ice_job_b],
	"declared_by": declared_by,
	"pattern": [
		{"job_id": ice_job_a, "snapshot_id": 5001, "checkpoint_id": 10},
		{"job_id": ice_job_b, "snapshot_id": 5002, "checkpoint_id": 3},
		{"job_id": ice_job_a, "snapshot_id": 5003, "checkpoint_id": 11},
	],
	"snapshot_counts": [2, 1],
}

# ---------------------------------------------------------------- helpers of this package's rules

test_ids_and_patterns_are_listed_in_order if {
	_ice_ids([3, 1, 2]) == "3, 1, 2"
	_ice_pattern_text([
		{"snapshot_id": 1, "job_id": "a", "checkpoint_id": 7},
		{"snapshot_id": 2, "job_id": "b", "checkpoint_id": 5},
	]) == "snapshot 1 by job a (checkpoint 7) then snapshot 2 by job b (checkpoint 5)"
}
