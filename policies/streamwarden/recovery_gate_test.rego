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

test_rec002_behind_non_idempotent_without_rollback_target_fires if {
	inp := _rgt_input(_rgt_sp({}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-002") == {"table.identifier"}
	some f in findings
	f.rule == "SW-REC-002"
	f.evidence.rollback_to.snapshot_id == 7012
	f.evidence.replay.first_checkpoint_id == 13
	f.message == "restoring checkpoint 12 of job 4d986ca01ddda5a426cdee76cc7caaf6 is behind the table's max committed checkpoint 20: the job replays checkpoints 13..20 (8 commits, 16 records, 8 data files) and the sink is not idempotent (write.upsert.enabled=false, identifier fields [], from the table), so rows are duplicated; roll the table back to snapshot 7012 (checkpoint 12) first and name it with --rollback-to 7012"
}

test_rec002_idempotent_sink_passes if {
	plan := _rgt_plan({"idempotence": {"idempotent": true, "upsert": true, "identifier_fields": ["order_id"], "source": "table"}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_upsert_without_identifier_fields_is_not_idempotent if {
	plan := _rgt_plan({"idempotence": {"idempotent": false, "upsert": true, "identifier_fields": [], "source": "table"}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-REC-002")) == 1
}

test_rec002_valid_rollback_target_passes if {
	plan := _rgt_plan({"rollback_target": {"named": "7012", "snapshot_id": 7012, "valid": true, "reason": null}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_invalid_rollback_target_says_why if {
	plan := _rgt_plan({"rollback_target": {"named": "7015", "snapshot_id": 7015, "valid": false, "reason": "snapshot 7015 already holds replayed checkpoints: rows would still be duplicated"}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	endswith(f.message, "; the named rollback target \"7015\" is not usable: snapshot 7015 already holds replayed checkpoints: rows would still be duplicated")
}

test_rec002_restore_at_the_max_committed_checkpoint_passes if {
	plan := _rgt_plan({"behind": false, "status": "current", "max_committed_checkpoint_id": 12, "replay": {"snapshots": 0}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

# The decision is the rule's alone (facts/restore.py gathers behind, replay, idempotence and the
# rollback target; no Python verdict): each of its four conditions, flipped alone, silences it.
test_rec002_behind_with_nothing_replayed_passes if {
	plan := _rgt_plan({"replay": {"snapshots": 0, "checkpoints": [], "first_checkpoint_id": null, "last_checkpoint_id": null}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_one_replayed_commit_fires if {
	plan := _rgt_plan({"max_committed_checkpoint_id": 13, "replay": {
		"snapshots": 1, "checkpoints": [13], "first_checkpoint_id": 13, "last_checkpoint_id": 13,
		"added_records": 2, "added_data_files": 1,
	}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	contains(f.message, "replays checkpoints 13..13 (1 commits, 2 records, 1 data files)")
}

test_rec002_unknown_idempotence_fails_closed if {
	plan := object.remove(_rgt_plan({}), ["idempotence"])
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-REC-002")) == 1
}

test_rec002_rollback_target_without_validity_fails_closed if {
	plan := _rgt_plan({"rollback_target": {"named": "7012", "snapshot_id": 7012}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-REC-002")) == 1
}

test_rec002_ambiguous_job_with_an_idempotent_sink_passes if {
	plan := {"status": "unknown", "reason_code": "ambiguous_job", "reason": "several jobs", "checkpoint_id": 12, "idempotence": {"idempotent": true}}
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_expired_matching_snapshot_asks_for_a_newer_savepoint if {
	plan := _rgt_plan({"matching_snapshot": null, "matching_missing": "expired"})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	contains(f.message, "no snapshot of the savepoint's checkpoint is left to roll back to: restore a newer savepoint")
}

test_rec002_unknown_job_fails_closed if {
	plan := {"status": "unknown", "reason_code": "ambiguous_job", "reason": "several jobs", "checkpoint_id": 12, "idempotence": {"idempotent": false}}
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	startswith(f.message, "cannot tell whether restoring checkpoint 12 replays committed data: several jobs")
}

test_rec002_table_without_commits_of_the_committer_is_silent if {
	plan := {"status": "unknown", "reason_code": "no_committer", "reason": "new table", "checkpoint_id": 12, "idempotence": {"idempotent": false}}
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_silent_without_table_facts if {
	inp := _rgt_with_plan(null)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec003_fresh_savepoint_passes if {
	inp := _rgt_input(_rgt_sp({}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_savepoint_exactly_max_age_old_passes if {
	inp := _rgt_input(_rgt_sp({"completed_ms": _rgt_now - (30 * _rgt_day)}))
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_savepoint_older_than_max_age if {
	inp := _rgt_input(_rgt_sp({"completed_ms": (_rgt_now - (30 * _rgt_day)) - 1000}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-003") == {"retention.savepoints.max_age"}
	some f in findings
	f.rule == "SW-REC-003"
	f.message == "the savepoint to restore (file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f, checkpoint 12) completed 30d1s ago, older than retention.savepoints.max_age 30d"
}

test_rec003_unknown_age_fails_closed if {
	inp := _rgt_input(_rgt_sp({"completed_ms": null}))
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-003"
	startswith(f.message, "the age of file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f (checkpoint 12) is unknown")
}

test_rec003_unknown_age_without_max_age_is_silent if {
	contract := json.remove(lib.example_contract, ["retention/savepoints"])
	inp := json.patch(_rgt_input(_rgt_sp({"completed_ms": null})), [{"op": "replace", "path": "/contract", "value": contract}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_gate_without_any_savepoint_for_a_stateful_pipeline if {
	inp := _rgt_input({"available": false, "configured": false})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-003") == {"retention.savepoints.max_age"}
}

test_rec003_missing_savepoint_outside_the_gate_is_silent if {
	inp := json.patch(_rgt_input({"available": false, "configured": false}), [{"op": "replace", "path": "/mode", "value": "check"}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_missing_savepoint_for_a_stateless_pipeline_is_silent if {
	contract := json.remove(lib.example_contract, ["state/operators"])
	inp := json.patch(_rgt_input({"available": false, "configured": false}), [{"op": "replace", "path": "/contract", "value": contract}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

test_rec003_unreadable_savepoint_is_left_to_fact001 if {
	inp := _rgt_input({"available": false, "configured": true, "error": "truncated"})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-003")
}

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

test_rec006_gate_savepoint_older_than_the_topic_keeps if {
	inp := _rgt_kafka_input(_rgt_now - (10 * _rgt_day))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-006") == {"job.sources[0].retention"}
	some f in findings
	f.rule == "SW-REC-006"
	f.message == `the savepoint to restore (file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f, checkpoint 12) completed 10d ago, and source "orders-topic" (job.sources[0]) keeps 7d, less a margin of 16h48m (a tenth of its retention, at least 1h), is 6d7h12m: the records after the position it resumes from are older than that and may be deleted already, so the restored job would skip them; it resumes orders[0] at offset 1234, orders[1] at earliest; restore a newer savepoint`
	f.evidence.age_ms == 10 * _rgt_day
	f.evidence.limit_ms == (7 * _rgt_day) - 60480000
	[p.partition | some p in f.evidence.partitions] == [0, 1]
	f.source == "savepoint"
}

test_rec006_gate_a_younger_savepoint_passes if {
	inp := _rgt_kafka_input((_rgt_now - (6 * _rgt_day)) - 1000)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-006")
}

test_rec006_gate_at_the_limit_fires if {
	inp := _rgt_kafka_input((_rgt_now - (7 * _rgt_day)) + 60480000)
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-006") == {"job.sources[0].retention"}
}

test_rec006_gate_without_kafka_facts_names_no_offsets if {
	inp := json.remove(_rgt_kafka_input(_rgt_now - (10 * _rgt_day)), ["facts/savepoint/kafka"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-006"
	contains(f.message, "would skip them; restore a newer savepoint")
	f.evidence.partitions == []
}

test_rec006_gate_many_partitions_are_summed_up if {
	parts := [{"source": "orders-topic", "topic": "orders", "partition": n, "offset": n * 10, "position": "offset"} | some n in numbers.range(0, 7)]
	inp := json.patch(_rgt_kafka_input(_rgt_now - (10 * _rgt_day)), [{"op": "replace", "path": "/facts/savepoint/kafka/partitions", "value": parts}])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-006"
	contains(f.message, "it resumes orders[0] at offset 0, orders[1] at offset 10, orders[2] at offset 20, orders[3] at offset 30, orders[4] at offset 40 and 3 more partitions;")
	count(f.evidence.partitions) == 8
}

test_rec006_gate_unknown_age_fails_closed if {
	inp := _rgt_kafka_input(null)
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-006") == {"job.sources[0].retention"}
	some f in findings
	f.rule == "SW-REC-006"
	startswith(f.message, `the age of file:/savepoints/savepoint-4d986c-1a2b3c4d5e6f (checkpoint 12) is unknown: neither Flink nor the storage tells when it completed, so whether source "orders-topic" (job.sources[0]) still keeps`)
}

test_rec006_gate_silent_without_a_readable_savepoint if {
	inp := json.patch(_rgt_kafka_input(_rgt_now - (10 * _rgt_day)), [{"op": "replace", "path": "/facts/savepoint", "value": {"available": false, "configured": true, "error": "x"}}])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-006")
}
