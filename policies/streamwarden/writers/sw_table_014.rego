# One writer per table (SW-TABLE-014): evaluated once per run on input.writers, the tables that more
# than one contract of the repository writes (src/streamwarden/writers.py builds it; a run where
# every table has one writer evaluates nothing). Each finding names the contract it belongs to
# (`pipeline`) and its place in that contract's file (`file`, `line`).

package streamwarden.writers

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [mode.writers]

# METADATA
# title: One contract owns each table; a second writer is a bounded backfill or fork of it
# description: |
#   Two jobs committing to one table interleave their snapshots: readers see both, a restore of
#   either rolls back the other, and the lineage rules find out only after the commits land. One
#   contract owns each table it writes (job.sinks[].table or table.identifier); any other contract
#   writing it must say so with fork_of: the owner (fork_of.pipeline), and a boundary, a branch or
#   WAP id AND a from/to range on a partition or event-time column. Evaluated across the
#   repository's contracts, once per run. Fires for each contract that writes a table another
#   contract owns without fork_of, or whose fork_of names a pipeline that is not the table's owner,
#   or lacks a branch/WAP id or the range. The owner is the writer without fork_of that wrote the
#   table at the base ref (in a pull request: the newcomer is the second writer), else the one
#   that declares the table's contract (table.identifier); when several writers tie, each of
#   them fires. In a pull request that adds the second writer, the change is breaking. Whether
#   the declared boundary holds on the live table is SW-TABLE-015's (check --env).
# custom:
#   id: SW-TABLE-014
#   kind: diff
#   severity: error
#   remediation: |
#     Declare the second contract a backfill or fork of the owner, confined to a branch (or a
#     write-audit-publish id) and a range: fork_of: {pipeline: OWNER, kind: backfill, branch: NAME,
#     range: {column: event_time, from: ..., to: ...}}; or write another table.
#   example: |
#     # contracts/orders.yaml:          table: {identifier: sales.orders}
#     # contracts/orders-replay.yaml:   job: {sinks: [{name: t, table: sales.orders}]}   # no fork_of
deny contains f if {
	some entry in input.writers.tables
	t := entry.table
	some w in _undeclared(entry)
	rivals := _rivals(t, w.pipeline)
	rivals > 0
	place := _place(w, t)
	f := _finding(
		w, t, place.path, place.line,
		sprintf(
			"pipeline %s writes table %s (%s)%s: one contract owns a table; declare fork_of with the owner, a branch or WAP id and a from/to range, or write another table",
			[lib.quote(w.pipeline), t, place.path, _claim(t, w.pipeline, rivals)],
		),
		{},
	)
}

_in_pr := is_string(object.get(input.writers, "base_ref", null))

# The place in writer w's contract that names table t: its first sink writing it, else table.identifier.
_place(w, t) := [p | some p in w.tables; p.table == t][0]

_declared(w) if is_object(object.get(w, "fork_of", null))

# Wrote the table at the base ref without declaring itself a fork there (a pull request only).
_wrote_at_base(w, t) if {
	_in_pr
	b := w.base
	b.status == "present"
	t in b.tables
	not is_object(object.get(b, "fork_of", null))
}

# A candidate owner's claim, strongest first: it wrote the table at the base ref (in a pull
# request the newcomer is the second writer), then it declares the table's contract.
_rank(w, t) := 2 + _owns(w, t) if {
	_wrote_at_base(w, t)
} else := _owns(w, t)

_owns(w, t) := 1 if object.get(w, "owns", null) == t else := 0

_undeclared(entry) := [w | some w in entry.writers; not _declared(w)]

# Per table, computed once (a partial rule, not a function called per writer: a table with
# thousands of writers stays linear): the names of the writers that may own it, the undeclared
# ones with the strongest claim, sorted.
_owners[t] := names if {
	some entry in input.writers.tables
	t := entry.table
	ws := _undeclared(entry)
	ranks := [_rank(w, t) | some w in ws]
	top := max(array.concat(ranks, [-1]))
	names := sort([w.pipeline | some i, w in ws; ranks[i] == top])
}

_owner_set[t] := {n | some n in names} if some t, names in _owners

_writer_names[t] := names if {
	some entry in input.writers.tables
	t := entry.table
	names := [w.pipeline | some w in entry.writers]
}

_shown := 5 # names a message lists; the rest are counted

# `"a", "b"`, then "and N more" past the first five; `skip` left out.
_names(names, skip) := out if {
	kept := [n | some n in names; n != skip]
	listed := concat(", ", [lib.quote(n) | some n in array.slice(kept, 0, _shown)])
	out := _and_more(listed, count(kept))
}

_and_more(listed, n) := sprintf("%s and %d more", [listed, n - _shown]) if n > _shown else := listed

_rivals(t, name) := count(_owners[t]) - 1 if name in _owner_set[t] else := count(_owners[t])

_finding(w, t, path, line, message, evidence) := {
	"rule": "SW-TABLE-014",
	"pipeline": w.pipeline,
	"file": w.file,
	"line": line,
	"path": path,
	"message": message,
	"value": {"table": t, "pipeline": w.pipeline},
	"evidence": object.union(
		{
			"table": t,
			"owners": array.slice(_owners[t], 0, 20),
			"owner_count": count(_owners[t]),
			"writers": array.slice(_writer_names[t], 0, 20),
			"writer_count": count(_writer_names[t]),
		},
		evidence,
	),
}

# Who else claims the table, for the message: the owner; or, where the claims tie, the others.
_claim(t, name, rivals) := sprintf(" without fork_of, and so %s %s (no contract can be told its owner)", [_does(rivals), _pipelines(t, name, rivals)]) if {
	name in _owner_set[t]
} else := sprintf(", which pipeline %s owns, without declaring itself a backfill or fork of it", [_names(_owners[t], name)]) if {
	rivals == 1
} else := sprintf(", which %s write without fork_of, without declaring itself a backfill or fork of one", [_pipelines(t, name, rivals)])

_pipelines(t, name, n) := sprintf("pipeline %s", [_names(_owners[t], name)]) if n == 1 else := sprintf("pipelines %s", [_names(_owners[t], name)])

_does(n) := "does" if n == 1 else := "do"

# SW-TABLE-014: a declared fork of a pipeline that does not own the table
deny contains f if {
	some entry in input.writers.tables
	t := entry.table
	some w in entry.writers
	_declared(w)
	of := w.fork_of.pipeline
	not of in _owner_set[t]
	f := _finding(
		w, t, "fork_of.pipeline", w.fork_of_pipeline_line,
		sprintf(
			"fork_of names pipeline %s, but table %s belongs to %s: a backfill or fork declares the table's owner",
			[lib.quote(of), t, _owner_text(t)],
		),
		{"fork_of": of},
	)
}

_owner_text(t) := _names(_owners[t], null) if count(_owners[t]) > 0 else := "no contract that writes it without fork_of"

# SW-TABLE-014: a declared fork without its boundary
deny contains f if {
	some entry in input.writers.tables
	some w in entry.writers
	_declared(w)
	missing := _missing(w.fork_of)
	count(missing) > 0
	f := _finding(
		w, entry.table, "fork_of", w.fork_of_line,
		sprintf(
			"%s %s writes table %s of pipeline %s without a boundary: it has no %s; its commits cannot be told apart from the owner's",
			[w.fork_of.kind, lib.quote(w.pipeline), entry.table, lib.quote(w.fork_of.pipeline), concat(" and no ", missing)],
		),
		{"fork_of": w.fork_of.pipeline, "missing": missing},
	)
}

_missing(fork) := [m |
	some [m, ok] in [
		["branch or WAP id (branch, wap_id)", _has_target(fork)],
		["from/to range (range)", is_object(object.get(fork, "range", null))],
	]
	ok == false
]

_has_target(fork) := true if {
	not lib.blank(object.get(fork, "branch", null))
} else := true if {
	not lib.blank(object.get(fork, "wap_id", null))
} else := false
