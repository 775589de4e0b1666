# Sources (SW-SRC): helpers of the broker side, read from facts.kafka (an environment's `kafka`
# section: docs/facts-kafka.md). Facts only; SW-SRC-002 and SW-SRC-003 decide.
package streamwarden.source

import rego.v1

import data.streamwarden.lib

# [index, job.sources[] entry, its topic as the broker describes it], for each source of kind
# kafka whose topic the broker answered for.
_kafka_topics contains [idx, source, topic] if {
	kafka := lib.gathered(input.facts.kafka)
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	is_string(source.kind)
	lower(source.kind) == "kafka"
	topic := kafka.topics[source.topic]
	is_object(topic)
}

# retention.ms for a message: "7d (retention.ms 604800000)", or no limit at all (-1).
_broker_retention_text(ms) := "no time limit (retention.ms -1)" if {
	ms < 0
} else := sprintf("%s (retention.ms %d)", [lib.fmt_ms(ms), ms])

# The retention a source is judged against: the declared one, else the broker's time limit.
_judged_retention(source, topic) := source.retention if {
	is_number(source.retention)
} else := topic.retention_ms if {
	is_number(topic.retention_ms)
	topic.retention_ms > 0
}

_judged_retention_text(source, topic) := sprintf("its declared retention %s", [lib.fmt_ms(source.retention)]) if {
	is_number(source.retention)
} else := sprintf("the topic's retention.ms %s", [lib.fmt_ms(topic.retention_ms)])
