# Recovery and governance (SW-REC): the contract side of each rule.
# Diff sides of the same ids live in the other recovery_*.rego files; their METADATA stays here.
package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

_metadata := object.get(input.contract, "metadata", {})

# METADATA
# title: Every pipeline has an owner and reachable consumers
# description: |
#   In an incident someone must answer for the pipeline and every consumer must be told.
#   Fires when metadata.owner is missing, empty or only whitespace, and once for each
#   metadata.consumers[] entry without a contact (missing, empty or only whitespace).
# custom:
#   id: SW-REC-001
#   severity: error
#   remediation: |
#     Set metadata.owner to the team that answers for the pipeline, and give every consumer a
#     contact (a channel or an e-mail address).
#   example: |
#     metadata:
#       name: orders-enrichment
#       consumers: [{name: finance-dashboard, freshness: 30m}]   # no owner, no contact
deny contains f if {
	owner := object.get(_metadata, "owner", null)
	lib.blank(owner)
	f := {
		"rule": "SW-REC-001",
		"message": "metadata.owner is missing or empty: nobody answers for this pipeline in an incident; set it to the owning team",
		"path": "metadata.owner",
		"evidence": {"owner": owner},
	}
}

# SW-REC-001: consumer without contact
deny contains f if {
	some idx, consumer in object.get(_metadata, "consumers", [])
	contact := object.get(consumer, "contact", null)
	lib.blank(contact)
	f := {
		"rule": "SW-REC-001",
		"message": sprintf(
			"consumer %s (metadata.consumers[%d]) has no contact: it cannot be told about an incident or a breaking change; add a contact",
			[lib.quote(object.get(consumer, "name", null)), idx],
		),
		"path": sprintf("metadata.consumers[%d].contact", [idx]),
		"evidence": {"consumer": object.get(consumer, "name", null), "contact": contact},
	}
}

# A backfill is bounded by a branch, or by both ends of a time range (SW-REC-004).
_bounded(b) if not lib.blank(object.get(b, "branch", null))

_bounded(b) if {
	not lib.blank(object.get(b, "from", null))
	not lib.blank(object.get(b, "to", null))
}

# METADATA
# title: Backfills and forks must be bounded
# description: |
#   A second job writing the same table must be confined, or its snapshots cannot be told
#   apart from the pipeline's (see SW-TABLE-010). The contract side fires for each backfills[]
#   entry with neither a branch nor a complete time range (both from and to); a from without a
#   to is not a boundary. The diff side fires for a fork added without one.
# custom:
#   id: SW-REC-004
#   kind: diff
#   severity: error
#   remediation: |
#     Give the backfill a branch to write to, or a from/to time range (RFC 3339) that bounds
#     the data it rewrites.
#   example: |
#     backfills: [{job: orders-backfill, reason: "replay March"}]   # no branch, no from/to
deny contains f if {
	some idx, backfill in object.get(input.contract, "backfills", [])
	not _bounded(backfill)
	f := {
		"rule": "SW-REC-004",
		"message": sprintf(
			"backfill %s (backfills[%d]) has no boundary: neither a branch nor a from/to time range; add a branch or both from and to",
			[lib.quote(object.get(backfill, "job", null)), idx],
		),
		"path": sprintf("backfills[%d].branch", [idx]),
		"evidence": {
			"job": object.get(backfill, "job", null),
			"branch": object.get(backfill, "branch", null),
			"from": object.get(backfill, "from", null),
			"to": object.get(backfill, "to", null),
		},
	}
}

# The sinks that promise exactly-once delivery (SW-REC-005). The promise is the sink's:
# checkpoint.mode alone promises no delivery, and a sink without `delivery` promises nothing.
_exactly_once_sinks := lib.exactly_once_sink_names(input.contract)

# 'sink "a"' or 'sinks "a" and "b"', for the message.
_sinks_phrase(names) := sprintf("sink %s promises", [lib.quote(names[0])]) if count(names) == 1

_sinks_phrase(names) := sprintf("sinks %s promise", [concat(" and ", [lib.quote(n) | some n in names])]) if count(names) > 1

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

_that_sink(names) := "the sink" if count(names) == 1

_that_sink(names) := "the sinks" if count(names) > 1
