package streamwarden.source

import rego.v1

import data.streamwarden.lib

_s3_now := 1764000000000

_s3_hour := 3600000

# orders[0] deleted 90000 records and holds 30000 over 2 days; orders[1] deleted none
_s3_parts := [
	{"partition": 0, "earliest": 90000, "latest": 120000, "earliest_timestamp_ms": _s3_now - (48 * _s3_hour)},
	{"partition": 1, "earliest": 0, "latest": 500, "earliest_timestamp_ms": _s3_now - (10 * _s3_hour)},
]

_s3_input(source_extra, topic_extra) := _kt_input(
	[object.union({"name": "orders-topic", "kind": "kafka", "topic": "orders", "rewindable": true, "retention": 7 * (24 * _s3_hour)}, source_extra)],
	{"orders": _kt_topic(object.union({"retention_bytes": 1073741824, "partitions": _s3_parts}, topic_extra))},
)

test_src003_size_expires_records_before_the_declared_retention if {
	findings := warn with input as _s3_input({}, {})
	lib.rule_paths(findings, "SW-SRC-003") == {"job.sources[0].retention"}
	some f in findings
	f.message == `topic "orders" of source "orders-topic" (job.sources[0]) expires records by size before its declared retention 7d: retention.bytes is 1GiB, and orders[0] has deleted 90000 records yet holds only 2d (30000 records since its oldest, about 625 per hour); a restore from a savepoint that old would skip records the contract counts on`
	[p.partition | some p in f.evidence.partitions] == [0]
	f.evidence.partitions[0].held_ms == 48 * _s3_hour
	f.evidence.retention_ms == 7 * (24 * _s3_hour)
	f.source == "kafka"
}

test_src003_the_broker_retention_when_none_is_declared if {
	findings := warn with input as _s3_input({"retention": null}, {"retention_ms": 3 * (24 * _s3_hour)})
	some f in findings
	f.rule == "SW-SRC-003"
	contains(f.message, "expires records by size before the topic's retention.ms 3d:")
}

test_src003_several_partitions if {
	parts := [object.union(_s3_parts[0], {"partition": n}) | some n in numbers.range(0, 2)]
	findings := warn with input as _s3_input({}, {"partitions": parts})
	some f in findings
	f.rule == "SW-SRC-003"
	endswith(f.message, "about 625 per hour), and 2 more partitions hold less than that; a restore from a savepoint that old would skip records the contract counts on")
	count(f.evidence.partitions) == 3
}

test_src003_passes_when_the_partition_holds_the_retention if {
	# held exactly 7d: not less than the retention
	parts := [object.union(_s3_parts[0], {"earliest_timestamp_ms": _s3_now - (7 * (24 * _s3_hour))})]
	findings := warn with input as _s3_input({}, {"partitions": parts})
	lib.no_rule(findings, "SW-SRC-003")
}

test_src003_silent_without_a_size_limit_or_what_it_reads if {
	unlimited := warn with input as _s3_input({}, {"retention_bytes": -1})
	lib.no_rule(unlimited, "SW-SRC-003")
	unanswered := warn with input as _s3_input({}, {"retention_bytes": null})
	lib.no_rule(unanswered, "SW-SRC-003")
	never_deleted := warn with input as _s3_input({}, {"partitions": [_s3_parts[1]]})
	lib.no_rule(never_deleted, "SW-SRC-003")
	no_stamp := warn with input as _s3_input({}, {"partitions": [object.union(_s3_parts[0], {"earliest_timestamp_ms": null})]})
	lib.no_rule(no_stamp, "SW-SRC-003")
	no_retention := warn with input as _s3_input({"retention": null}, {"retention_ms": -1})
	lib.no_rule(no_retention, "SW-SRC-003")
}
