package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

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
