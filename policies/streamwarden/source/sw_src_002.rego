package streamwarden.source

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.kafka]

# METADATA
# title: A Kafka source's declared retention is the broker's
# description: |
#   With Kafka facts (an environment's kafka section: docs/facts-kafka.md), each job.sources[]
#   entry of kind kafka is compared with its topic as the broker describes it. Fires when the
#   declared retention differs from the topic's retention.ms (drift: SW-REC-006's arithmetic is
#   about a retention the broker does not apply; -1, no time limit, differs from any declared
#   value), and when the topic's cleanup.policy is compact without delete while the source is
#   declared rewindable: true (a compacted topic keeps the newest record per key, not the log a
#   restore re-reads from its offsets). Silent for a key the broker did not answer (null).
# custom:
#   id: SW-SRC-002
#   severity: error
#   remediation: |
#     Make the contract say what the broker does: set the source's retention to the topic's
#     retention.ms (or change the topic's retention.ms to what the contract promises). For a
#     compacted topic, declare the source rewindable: false, or add delete to its cleanup.policy
#     (compact,delete) and declare that retention.
#   example: |
#     job:
#       sources: [{name: orders-topic, kind: kafka, topic: orders, rewindable: true, retention: 7d}]
#     # the broker: orders has retention.ms 259200000 (3d)
deny contains f if {
	some [idx, source, topic] in _kafka_topics
	is_number(source.retention)
	is_number(topic.retention_ms)
	topic.retention_ms != source.retention
	f := lib.finding(
		"SW-SRC-002",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"%s declares retention %s, but the broker keeps topic %s for %s: what a restore can still read is the broker's, so the contract's retention checks (SW-REC-006) are about the wrong value; make them agree",
			[lib.source_label(source, idx), lib.fmt_ms(source.retention), lib.quote(source.topic), _broker_retention_text(topic.retention_ms)],
		),
		{
			"source": object.get(source, "name", null),
			"topic": source.topic,
			"declared_ms": source.retention,
			"retention_ms": topic.retention_ms,
		},
		{"source": "kafka", "value": {"source": object.get(source, "name", null), "drift": source.topic}},
	)
}

deny contains f if {
	some [idx, source, topic] in _kafka_topics
	source.rewindable == true
	is_array(topic.cleanup_policy)
	"compact" in topic.cleanup_policy
	not "delete" in topic.cleanup_policy
	f := lib.finding(
		"SW-SRC-002",
		sprintf("job.sources[%d].rewindable", [idx]),
		sprintf(
			"%s is declared rewindable, but its topic %s is compacted (cleanup.policy %s): the broker keeps only the newest record of each key, so a restore that rewinds to a savepoint's offsets does not re-read the records it replaced; declare it rewindable: false, or use cleanup.policy compact,delete",
			[lib.source_label(source, idx), lib.quote(source.topic), concat(",", topic.cleanup_policy)],
		),
		{
			"source": object.get(source, "name", null),
			"topic": source.topic,
			"cleanup_policy": topic.cleanup_policy,
		},
		{"source": "kafka", "value": {"source": object.get(source, "name", null), "compacted": source.topic}},
	)
}
