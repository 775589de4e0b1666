package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Consumers must not be promised more freshness than the pipeline delivers
# description: |
#   The Iceberg sink commits on checkpoint, so data reaches readers at best every
#   checkpoint.interval, plus the table.commit.max_interval slack (0 when absent). Fires for each
#   metadata.consumers[] entry whose freshness is below that sum (equal is fine). Silent when
#   checkpoint.interval is absent (SW-CKPT-001 covers that).
# custom:
#   id: SW-TABLE-006
#   severity: error
#   remediation: |
#     Shorten checkpoint.interval or table.commit.max_interval, or agree a looser freshness with
#     the consumer.
#   example: |
#     metadata: {consumers: [{name: fraud-features, freshness: 1m, contact: "fraud@example.com"}]}
#     checkpoint: {interval: 60s}
#     table: {commit: {max_interval: 5m}}
deny contains f if {
	interval := input.contract.checkpoint.interval
	is_number(interval)
	deliverable := interval + _commit_slack
	some idx, consumer in object.get(input.contract, ["metadata", "consumers"], [])
	freshness := consumer.freshness
	is_number(freshness)
	deliverable > freshness
	f := {
		"rule": "SW-TABLE-006",
		"message": sprintf(
			"consumer %s was promised freshness %s but the pipeline delivers at best %s (checkpoint.interval %s + table.commit.max_interval %s); shorten the interval or relax the promise",
			[lib.quote(object.get(consumer, "name", null)), lib.fmt_ms(freshness), lib.fmt_ms(deliverable), lib.fmt_ms(interval), lib.fmt_ms(_commit_slack)],
		),
		"path": sprintf("metadata.consumers[%d].freshness", [idx]),
		"evidence": {
			"consumer": object.get(consumer, "name", null),
			"freshness": freshness,
			"checkpoint_interval": interval,
			"commit_max_interval": _commit_slack,
			"deliverable": deliverable,
		},
	}
}
