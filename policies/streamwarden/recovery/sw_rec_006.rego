package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

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
#   Kafka splits hold. With the broker's offsets (facts.kafka: an environment's kafka section), it
#   also fires when a partition's restore offset from the savepoint's split state is below the
#   earliest offset the broker still holds, naming the records lost per partition (earliest less
#   the restore offset); evidence lists each partition's window (restore offset, earliest, latest).
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
