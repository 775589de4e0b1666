package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Exactly-once needs rewindable sources
# description: |
#   After a failure Flink rewinds every source to the last checkpoint; a source that cannot be
#   reset loses or duplicates the records in between, so a sink's exactly-once promise cannot
#   hold. Fires for each job.sources[] entry with rewindable false while any job.sinks[] entry
#   declares delivery exactly_once. The promise is the sink's: checkpoint.mode alone is no
#   delivery promise, so sinks that are at_least_once or declare no delivery do not fire it.
#   A source without rewindable is not judged.
# custom:
#   id: SW-REC-005
#   severity: warning
#   remediation: |
#     Make the source rewindable (a replayable source such as Kafka, Kinesis or files, declared
#     rewindable: true), or declare the exactly_once sinks delivery: at_least_once and make
#     consumers tolerate duplicates.
#   example: |
#     job:
#       sources: [{name: clicks, kind: socket, rewindable: false}]
#       sinks: [{name: orders-table, delivery: exactly_once}]
warn contains f if {
	count(_exactly_once_sinks) > 0
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	source.rewindable == false
	sinks := sort([n | some n in _exactly_once_sinks])
	f := {
		"rule": "SW-REC-005",
		"message": sprintf(
			"source %s (job.sources[%d]) is not rewindable while %s delivery exactly_once: records since the last checkpoint cannot be replayed on restore, so they are lost or duplicated; make the source rewindable or declare %s at_least_once",
			[lib.quote(object.get(source, "name", null)), idx, _sinks_phrase(sinks), _that_sink(sinks)],
		),
		"path": sprintf("job.sources[%d].rewindable", [idx]),
		"evidence": {"source": object.get(source, "name", null), "rewindable": false, "exactly_once_sinks": sinks},
	}
}
