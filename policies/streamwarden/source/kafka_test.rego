package streamwarden.source

import rego.v1

_kt_input(sources, topics) := {
	"contract": {"job": {"name": "j", "sources": sources}},
	"facts": {"kafka": {"available": true, "configured": true, "bootstrap_servers": ["b:9092"], "topics": topics}},
	"now_ms": 1764000000000,
}

_kt_topic(extra) := object.union(
	{"sources": ["orders-topic"], "retention_ms": 604800000, "retention_bytes": -1, "cleanup_policy": ["delete"], "partitions": []},
	extra,
)

test_kafka_topics_are_the_kafka_sources_the_broker_answered_for if {
	inp := _kt_input(
		[
			{"name": "orders-topic", "kind": "Kafka", "topic": "orders"},
			{"name": "no-topic", "kind": "kafka"},
			{"name": "unread", "kind": "kafka", "topic": "unread"},
			{"name": "files", "kind": "filesystem", "topic": "orders"},
			{"name": "no-kind", "topic": "orders"},
		],
		{"orders": _kt_topic({})},
	)
	found := _kafka_topics with input as inp
	{[i, s.name] | some [i, s, _] in found} == {[0, "orders-topic"]}
}

test_kafka_topics_need_an_available_section if {
	inp := json.patch(_kt_input([{"name": "a", "kind": "kafka", "topic": "orders"}], {"orders": _kt_topic({})}), [{"op": "replace", "path": "/facts/kafka", "value": {"available": false, "configured": true, "error": "down"}}])
	found := _kafka_topics with input as inp
	count(found) == 0
}

test_broker_retention_text if {
	_broker_retention_text(-1) == "no time limit (retention.ms -1)"
	_broker_retention_text(259200000) == "3d (retention.ms 259200000)"
}

test_judged_retention_prefers_the_declared_one if {
	_judged_retention({"retention": 86400000}, {"retention_ms": 604800000}) == 86400000
	_judged_retention({}, {"retention_ms": 604800000}) == 604800000
	not _judged_retention({}, {"retention_ms": -1})
	not _judged_retention({}, {"retention_ms": null})
	_judged_retention_text({"retention": 86400000}, {}) == "its declared retention 1d"
	_judged_retention_text({}, {"retention_ms": 604800000}) == "the topic's retention.ms 7d"
}
