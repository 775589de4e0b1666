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

# The oldest savepoint the contract allows restoring, by the field that allows it (SW-REC-006):
# retention.savepoints.max_age (SW-REC-003 lets a savepoint that old through the gate) and
# retention.rollback_window (the job must be restorable that far back).
_restore_windows contains w if {
	v := input.contract.retention.savepoints.max_age
	is_number(v)
	w := {"path": "retention.savepoints.max_age", "ms": v}
}

_restore_windows contains w if {
	v := input.contract.retention.rollback_window
	is_number(v)
	w := {"path": "retention.rollback_window", "ms": v}
}

# METADATA
# title: A restore must not read from before what a source still keeps
# description: |
#   A restored job resumes each source at the position its savepoint recorded (a Kafka source at
#   the offsets of its splits). A rewindable source keeps its records only for its retention:
#   when the savepoint is older than that, the records between the savepoint's position and the
#   oldest one still kept are gone, and the job silently skips them. The contract side fires for
#   each job.sources[] entry with rewindable true and a retention, and each of
#   retention.savepoints.max_age and retention.rollback_window that is not below the source's
#   retention less its margin (retention_margin, else a tenth of the retention, at least 1h: the
#   job's lag at the savepoint, record timestamps behind their arrival, the time the deploy
#   takes). In the gate (and wherever a savepoint is read), it fires when the savepoint to
#   restore is older than that limit, or its age is unknown, naming the restore offsets its
#   Kafka splits hold.
# custom:
#   id: SW-REC-006
#   severity: error
#   remediation: |
#     Keep savepoints younger than what the source keeps: shorten retention.savepoints.max_age or
#     retention.rollback_window, or raise the source's retention (and declare it), or take a fresh
#     savepoint before restoring. A source that cannot keep that long is not rewindable so far back.
#   example: |
#     job:
#       sources: [{name: orders-topic, kind: kafka, rewindable: true, retention: 7d}]
#     retention: {savepoints: {max_age: 10d}}   # a 10-day-old savepoint reads 3 days the topic deleted
deny contains f if {
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	source.rewindable == true
	is_number(source.retention)
	margin := lib.source_margin(source)
	limit := source.retention - margin
	some w in _restore_windows
	w.ms >= limit
	f := lib.finding(
		"SW-REC-006",
		w.path,
		sprintf(
			"%s %s allows restoring a savepoint that %s no longer holds: it keeps %s, less %s, is %s, and %s is not below that; a restore that old skips the records deleted in between",
			[
				w.path, lib.fmt_ms(w.ms), lib.source_label(source, idx), lib.fmt_ms(source.retention),
				lib.source_margin_text(source), _age_or_none(limit), lib.fmt_ms(w.ms),
			],
		),
		{
			"source": object.get(source, "name", null),
			"window": w.path,
			"window_ms": w.ms,
			"retention_ms": source.retention,
			"margin_ms": margin,
			"limit_ms": limit,
		},
		{"value": {"source": object.get(source, "name", null), "window": w.path}},
	)
}

# A computed limit for a message: an age, or "nothing" when the margin eats the whole retention.
_age_or_none(ms) := lib.fmt_age(ms) if ms >= 1000 else := "nothing"
