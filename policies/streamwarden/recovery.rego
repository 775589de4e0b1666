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

# Why delivery is exactly-once (SW-REC-005).
_exactly_once contains sprintf("sink %s delivers exactly_once", [lib.quote(object.get(s, "name", null))]) if {
	some s in object.get(input.contract, ["job", "sinks"], [])
	s.delivery == "exactly_once"
}

_exactly_once contains "checkpoint.mode is exactly_once" if {
	input.contract.checkpoint.mode == "exactly_once"
}

# METADATA
# title: Exactly-once needs rewindable sources
# description: |
#   After a failure Flink rewinds every source to the last checkpoint; a source that cannot be
#   reset loses or duplicates the records in between, so exactly-once is not achievable. Fires
#   for each job.sources[] entry with rewindable false while any sink declares delivery
#   exactly_once or checkpoint.mode is exactly_once. A source without rewindable is not judged.
# custom:
#   id: SW-REC-005
#   severity: warning
#   remediation: |
#     Use a replayable source (Kafka, Kinesis, files), or declare the sinks at_least_once and
#     make consumers tolerate duplicates.
#   example: |
#     job:
#       sources: [{name: clicks, kind: socket, rewindable: false}]
#       sinks: [{name: orders-table, delivery: exactly_once}]
warn contains f if {
	count(_exactly_once) > 0
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	source.rewindable == false
	reasons := sort([r | some r in _exactly_once])
	f := {
		"rule": "SW-REC-005",
		"message": sprintf(
			"source %s (job.sources[%d]) is not rewindable while %s: records since the last checkpoint are lost or duplicated on restore; use a rewindable source or at_least_once delivery",
			[lib.quote(object.get(source, "name", null)), idx, concat(" and ", reasons)],
		),
		"path": sprintf("job.sources[%d].rewindable", [idx]),
		"evidence": {"source": object.get(source, "name", null), "rewindable": false, "exactly_once": reasons},
	}
}
