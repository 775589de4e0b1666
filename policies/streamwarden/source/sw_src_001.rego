# Sources (SW-SRC): what the contract says about each job.sources[] entry (SW-SRC-001), and how
# it compares with the broker's own settings, read from an environment's `kafka` section
# (facts.kafka: SW-SRC-002, SW-SRC-003).
package streamwarden.source

import rego.v1

import data.streamwarden.lib

# METADATA
# title: A rewindable source declares its retention
# description: |
#   A restore rewinds each rewindable source to the position its savepoint recorded; whether
#   the source still holds the records from there on depends on how long it keeps them. Without
#   a declared retention, SW-REC-006 cannot tell whether the savepoints the contract allows
#   restoring are still readable. Fires for each job.sources[] entry with rewindable true and
#   no retention.
# custom:
#   id: SW-SRC-001
#   severity: warning
#   remediation: |
#     Declare the source's retention: for Kafka the topic's retention.ms, for Kinesis the
#     stream's retention period, for files the storage lifecycle rule (e.g. retention: 7d).
#   example: |
#     job:
#       sources: [{name: orders-topic, kind: kafka, rewindable: true}]   # no retention
warn contains f if {
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	source.rewindable == true
	not is_number(object.get(source, "retention", null))
	f := lib.finding(
		"SW-SRC-001",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"%s is rewindable but declares no retention: whether a restore from an old savepoint can still read it cannot be checked (SW-REC-006); declare how long it keeps its records",
			[lib.source_label(source, idx)],
		),
		{"source": object.get(source, "name", null)},
		{"value": object.get(source, "name", null)},
	)
}
