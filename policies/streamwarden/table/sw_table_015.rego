package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: A declared backfill commits only to its branch and writes only its range
# description: |
#   A backfill or fork declares a boundary (fork_of: a branch or WAP id and a from/to range; the
#   owner's backfills[]: a branch): live, its commits must stay inside it. Its snapshots are those
#   whose summary carries its Flink job id (fork_of.job_id or backfills[].job_id, or its job name
#   resolved through the Flink REST facts) or its WAP id (wap.id), read from the table's metadata
#   (facts.iceberg.backfills). Fires when one of them is in the ancestry of a branch other than
#   the declared one and not in the declared branch's (committed outside its branch: a fast-forward
#   of main to the backfill branch keeps them on both and passes); and when the data files a
#   snapshot added reach outside [from, to) of fork_of.range: judged from the manifests, never the
#   data, by the partition values when the column is the source of an identity, year, month, day
#   or hour partition field (a partition is outside when none of its values is in the range), else
#   by the column's lower/upper bounds (a bound outside is a row outside). Silent when no job id or
#   WAP id is known to find the snapshots by; a manifest that cannot be read is SW-FACT-001's.
# custom:
#   id: SW-TABLE-015
#   severity: error
#   remediation: |
#     Find the backfill's job (the snapshot ids name its commits): stop it, point its sink at the
#     declared branch (Iceberg sink option branch, or the WAP id), roll back or cherry-pick out
#     what it committed to the owner's branch, and rewrite or delete the data outside its range;
#     or, if the boundary was wrong, correct fork_of (or backfills[]) in review.
#   example: |
#     fork_of: {pipeline: orders, kind: backfill, job_id: bfbf..., branch: backfill-2025q3,
#               range: {column: event_time, from: 2025-07-01, to: 2025-10-01}}
#     # snapshots 7012 and 7013 of job bfbf... are on main; snapshot 7013 wrote event_time_day=2025-10-03
deny contains f if {
	some item in _t015_items
	is_string(item.branch)
	some ref in _t015_other_refs(item)
	ids := [s.snapshot_id | some s in item.snapshots; _t015_outside_on(s, item.branch, ref)]
	f := lib.finding(
		"SW-TABLE-015",
		sprintf("%s.branch", [item.path]),
		sprintf(
			"%s committed %s %s to branch %s of %s, outside its declared branch %s: its data is in what the owner's readers see before anyone audited it",
			[_t015_who(item), _t015_snapshot_word(ids), _t015_listed(ids), lib.quote(ref), _ice_name, lib.quote(item.branch)],
		),
		{"declared_at": item.path, "branch": item.branch, "ref": ref, "snapshot_ids": array.slice(ids, 0, 20), "snapshot_count": count(ids), "job_ids": item.job_ids, "wap_id": item.wap_id},
		{"source": "iceberg", "value": sprintf("%s@%s", [item.path, ref])},
	)
}

# SW-TABLE-015: data written outside the declared range
deny contains f if {
	some item in _t015_items
	r := item.range
	is_object(r)
	r.checked == true
	outside := [s | some s in r.snapshots; _t015_out_of_range(s, r)]
	count(outside) > 0
	f := lib.finding(
		"SW-TABLE-015",
		sprintf("%s.range", [item.path]),
		sprintf(
			"%s wrote data outside its declared range [%s, %s) of column %s in %s: %s (judged by %s, from the manifests)",
			[_t015_who(item), r.from_text, r.to_text, r.column, _ice_name, _t015_bounds_text(outside, r), concat(" and ", r.compared)],
		),
		{
			"declared_at": item.path,
			"column": r.column,
			"from": r.from_text,
			"to": r.to_text,
			"unit": r.unit,
			"snapshots": [_t015_evidence(s, r) | some s in array.slice(outside, 0, 20)],
			"snapshot_count": count(outside),
		},
		{"source": "iceberg", "value": sprintf("%s.range", [item.path])},
	)
}

_t015_items := [item | some item in object.get(object.get(_ice, "backfills", {}), "items", [])]

# Branches other than the declared one that hold one of the item's snapshots.
_t015_other_refs(item) := {ref |
	some s in item.snapshots
	some ref in s.branches
	ref != item.branch
	not item.branch in s.branches
}

_t015_outside_on(s, branch, ref) if {
	ref in s.branches
	not branch in s.branches
}

_t015_out_of_range(s, r) if s.lowest < r.from

_t015_out_of_range(s, r) if s.highest >= r.to

# "backfill "orders-backfill" (job bfbf…, declared at fork_of)"
_t015_who(item) := sprintf("%s %s (%s, declared at %s)", [item.kind, lib.quote(item.job), _t015_key(item), item.path]) if {
	is_string(item.job)
} else := sprintf("%s (%s, declared at %s)", [item.kind, _t015_key(item), item.path])

_t015_key(item) := sprintf("job %s", [concat(", ", item.job_ids)]) if {
	count(item.job_ids) > 0
} else := sprintf("WAP id %s", [lib.quote(item.wap_id)])

_t015_snapshot_word(ids) := "snapshot" if count(ids) == 1 else := "snapshots"

_t015_listed(ids) := sprintf("%s and %d more", [_ice_ids(array.slice(ids, 0, 5)), count(ids) - 5]) if {
	count(ids) > 5
} else := _ice_ids(ids)

_t015_bounds_text(outside, r) := text if {
	shown := [_t015_one(s, r) | some s in array.slice(outside, 0, 5)]
	more := count(outside) - count(shown)
	text := concat("; ", array.concat(shown, [sprintf("%d more snapshots", [more]) | more > 0]))
}

_t015_one(s, r) := sprintf("snapshot %v: %s", [s.snapshot_id, concat(", ", _t015_sides(s, r))])

_t015_sides(s, r) := [side |
	some [cond, side] in [
		[s.lowest < r.from, sprintf("%s, before %s", [s.lowest_text, r.from_text])],
		[s.highest >= r.to, sprintf("%s, at or after %s", [s.highest_text, r.to_text])],
	]
	cond == true
]

_t015_evidence(s, r) := {
	"snapshot_id": s.snapshot_id,
	"lowest": s.lowest_text,
	"highest": s.highest_text,
	"below_from": s.lowest < r.from,
	"at_or_after_to": s.highest >= r.to,
}
