package streamwarden.source

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.kafka]

# METADATA
# title: A Kafka topic's size limit must not expire records sooner than its retention
# description: |
#   With Kafka facts, for each job.sources[] entry of kind kafka whose topic has a retention.bytes
#   limit (not -1). The rate is what the broker shows, not a guess at record sizes (Kafka's admin
#   API does not tell a partition's size in bytes): a partition's records held are its latest
#   offset less its earliest, over the time held, from the timestamp of its oldest record
#   (ListOffsets for timestamp 0) to input.now_ms. Kafka deletes by time only the records older
#   than retention.ms, so a partition that has already deleted records (earliest offset above 0)
#   yet holds less time than the retention lost records younger than it: at the topic's observed
#   rate, retention.bytes is what expires them. Fires once per source, naming the partitions that
#   hold less than the declared retention (else the topic's retention.ms), with each one's window
#   and rate in evidence. Silent when the oldest record's timestamp is unknown, and for a topic
#   that never deleted a record (it cannot show the limit at work yet). A producer that stamps
#   records with old event times can hide it (the oldest record looks older than its arrival).
# custom:
#   id: SW-SRC-003
#   severity: warning
#   remediation: |
#     Raise the topic's retention.bytes (per partition) above what the partition receives over the
#     retention (records per hour x the retention x the record size), or set it to -1 and let
#     retention.ms bound the topic; else declare the shorter retention the topic really keeps, so
#     that SW-REC-006 judges restores against it.
#   example: |
#     job:
#       sources: [{name: orders-topic, kind: kafka, topic: orders, rewindable: true, retention: 7d}]
#     # the broker: retention.bytes 1073741824; orders[0] holds offsets 90000..120000, its oldest record 2d old
warn contains f if {
	some [idx, source, topic] in _kafka_topics
	is_number(topic.retention_bytes)
	topic.retention_bytes >= 0
	limit := _judged_retention(source, topic)
	short := [w |
		some p in topic.partitions
		w := _held_window(p)
		w.held_ms < limit
	]
	count(short) > 0
	first := short[0]
	f := lib.finding(
		"SW-SRC-003",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"topic %s of %s expires records by size before %s: retention.bytes is %s, and %s[%d] has deleted %d records yet holds only %s (%d records since its oldest, about %d per hour)%s; a restore from a savepoint that old would skip records the contract counts on",
			[
				lib.quote(source.topic), lib.source_label(source, idx), _judged_retention_text(source, topic), lib.fmt_bytes(topic.retention_bytes),
				source.topic, first.partition, first.earliest, lib.fmt_age(first.held_ms), first.held_records, first.per_hour,
				_more_partitions(short),
			],
		),
		{
			"source": object.get(source, "name", null),
			"topic": source.topic,
			"retention_bytes": topic.retention_bytes,
			"retention_ms": limit,
			"partitions": short,
		},
		{"source": "kafka", "value": {"source": object.get(source, "name", null), "topic": source.topic}},
	)
}

# A partition that has deleted records, and the time and records it holds (its observed rate).
_held_window(p) := w if {
	p.earliest > 0
	is_number(p.earliest_timestamp_ms)
	held_ms := input.now_ms - p.earliest_timestamp_ms
	held := p.latest - p.earliest
	w := {
		"partition": p.partition,
		"earliest": p.earliest,
		"latest": p.latest,
		"earliest_timestamp_ms": p.earliest_timestamp_ms,
		"held_ms": held_ms,
		"held_records": held,
		"per_hour": floor((held * 3600000) / max([held_ms, 1])),
	}
}

_more_partitions(short) := sprintf(", and %d more partitions hold less than that", [count(short) - 1]) if {
	count(short) > 1
} else := ""
