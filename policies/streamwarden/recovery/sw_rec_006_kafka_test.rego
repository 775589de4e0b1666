package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

_rkt_sp := {
	"available": true, "configured": true, "kind": "savepoint", "location": "file:/sp/savepoint-6ff483-a581bdbc1b7d", "checkpoint_id": 28,
	"completed_ms": 1764000000000, "operators": [],
	"kafka": {"sources": [], "partitions": [
		{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 0, "offset": 7, "position": "offset"},
		{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 1, "offset": 4, "position": "offset"},
		{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 2, "offset": null, "position": "earliest"},
	]},
}

_rkt_broker(earliest0, earliest1) := {"available": true, "configured": true, "bootstrap_servers": ["b:9092"], "topics": {"orders": {
	"sources": ["orders-topic"], "retention_ms": 604800000, "retention_bytes": -1, "cleanup_policy": ["delete"],
	"partitions": [
		{"partition": 0, "earliest": earliest0, "latest": 20, "earliest_timestamp_ms": null},
		{"partition": 1, "earliest": earliest1, "latest": 9, "earliest_timestamp_ms": null},
		{"partition": 2, "earliest": 30, "latest": 40, "earliest_timestamp_ms": null},
	],
}}}

_rkt_input(sp, broker) := {
	"contract": {"job": {"name": "j", "sources": [{"name": "rates", "kind": "kafka"}, {"name": "orders-topic", "kind": "kafka", "topic": "orders", "uid": "orders-source"}]}},
	"facts": {"savepoint": sp, "kafka": broker},
	"now_ms": 1764000000000,
	"mode": "gate",
}

test_rec006_kafka_restore_offsets_below_the_earliest_deny if {
	findings := deny with input as _rkt_input(_rkt_sp, _rkt_broker(12, 6))
	lib.rule_paths(findings, "SW-REC-006") == {"job.sources[1]"}
	some f in findings
	f.rule == "SW-REC-006"
	f.message == `the savepoint to restore (file:/sp/savepoint-6ff483-a581bdbc1b7d, checkpoint 28) resumes "orders-topic" (job.sources[1]) below the earliest offset the broker still holds: orders[0] at offset 7, the broker's earliest is 12 (5 records lost), orders[1] at offset 4, the broker's earliest is 6 (2 records lost); the restored job would skip 7 records the broker deleted; restore a newer savepoint`
	f.evidence.lost_records == 7
	f.evidence.partitions == [
		{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 0, "restore_offset": 7, "earliest": 12, "latest": 20, "lost": 5},
		{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": 1, "restore_offset": 4, "earliest": 6, "latest": 9, "lost": 2},
	]
	f.source == "kafka"
}

test_rec006_kafka_one_partition_lost_the_window_shows_all if {
	findings := deny with input as _rkt_input(_rkt_sp, _rkt_broker(8, 0))
	some f in findings
	f.rule == "SW-REC-006"
	contains(f.message, "orders[0] at offset 7, the broker's earliest is 8 (1 record lost); the restored job would skip 1 record the broker deleted")
	[w.lost | some w in f.evidence.partitions] == [1, 0]
}

test_rec006_kafka_offsets_the_broker_still_holds_pass if {
	# at the earliest offset exactly: the record is still there
	findings := deny with input as _rkt_input(_rkt_sp, _rkt_broker(7, 4))
	lib.no_rule(findings, "SW-REC-006")
	below := deny with input as _rkt_input(_rkt_sp, _rkt_broker(0, 0))
	lib.no_rule(below, "SW-REC-006")
}

test_rec006_kafka_a_split_without_an_offset_resumes_at_a_position if {
	# partition 2 resumes at "earliest" (offset null): nothing to compare, though the broker starts at 30
	findings := deny with input as _rkt_input(_rkt_sp, _rkt_broker(0, 0))
	lib.no_rule(findings, "SW-REC-006")
}

test_rec006_kafka_unmatched_operator if {
	sp := json.patch(_rkt_sp, [{"op": "replace", "path": "/kafka/partitions/0/source", "value": null}])
	findings := deny with input as _rkt_input(sp, _rkt_broker(12, 0))
	lib.rule_paths(findings, "SW-REC-006") == {"job.sources"}
	some f in findings
	contains(f.message, "resumes the Kafka source of operator ab below the earliest offset")
}

test_rec006_kafka_silent_without_both_sides if {
	no_broker := deny with input as _rkt_input(_rkt_sp, {"available": false, "configured": true, "error": "down"})
	lib.no_rule(no_broker, "SW-REC-006")
	no_savepoint := deny with input as _rkt_input({"available": false, "configured": false}, _rkt_broker(12, 6))
	lib.no_rule(no_savepoint, "SW-REC-006")
	other_topic := deny with input as _rkt_input(json.patch(_rkt_sp, [{"op": "replace", "path": "/kafka/partitions/0/topic", "value": "x"}]), _rkt_broker(12, 0))
	lib.no_rule(other_topic, "SW-REC-006")
}

test_rec006_kafka_many_partitions_are_cut_in_the_message if {
	parts := [{"source": "orders-topic", "operator_id": "ab", "topic": "orders", "partition": n, "offset": 0, "position": "offset"} | some n in numbers.range(0, 6)]
	sp := json.patch(_rkt_sp, [{"op": "replace", "path": "/kafka/partitions", "value": parts}])
	broker := json.patch(_rkt_broker(1, 1), [{"op": "replace", "path": "/topics/orders/partitions", "value": [{"partition": n, "earliest": 1, "latest": 2, "earliest_timestamp_ms": null} | some n in numbers.range(0, 6)]}])
	findings := deny with input as _rkt_input(sp, broker)
	some f in findings
	f.rule == "SW-REC-006"
	contains(f.message, "orders[4] at offset 0, the broker's earliest is 1 (1 record lost); the restored job would skip 7 records")
	count(f.evidence.partitions) == 7
}
