package streamwarden.source

import rego.v1

import data.streamwarden.lib

_s2_source(extra) := object.union({"name": "orders-topic", "kind": "kafka", "topic": "orders", "rewindable": true, "retention": 604800000}, extra)

test_src002_the_broker_agrees if {
	inp := _kt_input([_s2_source({})], {"orders": _kt_topic({})})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-SRC-002")
}

test_src002_drift if {
	inp := _kt_input([_s2_source({})], {"orders": _kt_topic({"retention_ms": 259200000})})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-SRC-002") == {"job.sources[0].retention"}
	some f in findings
	f.message == `source "orders-topic" (job.sources[0]) declares retention 7d, but the broker keeps topic "orders" for 3d (retention.ms 259200000): what a restore can still read is the broker's, so the contract's retention checks (SW-REC-006) are about the wrong value; make them agree`
	f.evidence == {"source": "orders-topic", "topic": "orders", "declared_ms": 604800000, "retention_ms": 259200000}
	f.source == "kafka"
}

test_src002_drift_to_no_time_limit if {
	inp := _kt_input([_s2_source({})], {"orders": _kt_topic({"retention_ms": -1})})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-SRC-002"
	contains(f.message, `the broker keeps topic "orders" for no time limit (retention.ms -1)`)
}

test_src002_drift_by_one_millisecond if {
	inp := _kt_input([_s2_source({})], {"orders": _kt_topic({"retention_ms": 604800001})})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-SRC-002") == {"job.sources[0].retention"}
}

test_src002_silent_without_what_it_compares if {
	no_declared := deny with input as _kt_input([object.remove(_s2_source({}), ["retention"])], {"orders": _kt_topic({"retention_ms": 1})})
	lib.no_rule(no_declared, "SW-SRC-002")
	unanswered := deny with input as _kt_input([_s2_source({})], {"orders": _kt_topic({"retention_ms": null, "cleanup_policy": null})})
	lib.no_rule(unanswered, "SW-SRC-002")
	other_topic := deny with input as _kt_input([_s2_source({"topic": "clicks"})], {"orders": _kt_topic({"retention_ms": 1})})
	lib.no_rule(other_topic, "SW-SRC-002")
	not_kafka := deny with input as _kt_input([_s2_source({"kind": "kinesis"})], {"orders": _kt_topic({"retention_ms": 1})})
	lib.no_rule(not_kafka, "SW-SRC-002")
}

test_src002_compacted_topic_declared_rewindable if {
	inp := _kt_input([_s2_source({})], {"orders": _kt_topic({"cleanup_policy": ["compact"]})})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-SRC-002") == {"job.sources[0].rewindable"}
	some f in findings
	f.message == `source "orders-topic" (job.sources[0]) is declared rewindable, but its topic "orders" is compacted (cleanup.policy compact): the broker keeps only the newest record of each key, so a restore that rewinds to a savepoint's offsets does not re-read the records it replaced; declare it rewindable: false, or use cleanup.policy compact,delete`
	f.evidence == {"source": "orders-topic", "topic": "orders", "cleanup_policy": ["compact"]}
}

test_src002_compact_and_delete_or_not_rewindable_pass if {
	both := deny with input as _kt_input([_s2_source({})], {"orders": _kt_topic({"cleanup_policy": ["compact", "delete"]})})
	lib.no_rule(both, "SW-SRC-002")
	not_rewindable := deny with input as _kt_input([_s2_source({"rewindable": false})], {"orders": _kt_topic({"cleanup_policy": ["compact"]})})
	lib.no_rule(not_rewindable, "SW-SRC-002")
}

test_src002_drift_and_compaction_are_two_findings if {
	inp := _kt_input([_s2_source({}), _s2_source({"name": "b", "topic": "ok"})], {"orders": _kt_topic({"retention_ms": 1, "cleanup_policy": ["compact"]}), "ok": _kt_topic({})})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-SRC-002") == {"job.sources[0].retention", "job.sources[0].rewindable"}
}
