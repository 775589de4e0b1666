package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-015

_t015_job := "bfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbf"

_t015_snap(id, branches) := {"snapshot_id": id, "timestamp_ms": 1, "operation": "append", "job_id": _t015_job, "wap_id": null, "branches": branches}

# days since the epoch: 2025-07-01 is 20270, 2025-10-01 is 20362
_t015_range(snapshots) := {
	"column": "event_time", "declared_from": "2025-07-01", "declared_to": "2025-10-01",
	"checked": true, "reason": null, "error": null,
	"type": "date", "unit": "days since 1970-01-01",
	"from": 20270, "to": 20362, "from_text": "2025-07-01", "to_text": "2025-10-01",
	"compared": ["partition event_time_day (day of date)"],
	"snapshots": snapshots, "entries_read": 3, "truncated": false,
}

_t015_bounds(id, lowest, highest) := {
	"snapshot_id": id, "files": 1,
	"lowest": lowest, "lowest_text": sprintf("partition event_time_day=%d", [lowest]), "lowest_file": "f.parquet",
	"highest": highest, "highest_text": sprintf("partition event_time_day=%d", [highest]), "highest_file": "g.parquet",
}

_t015_item(patch) := object.union(
	{
		"path": "fork_of", "kind": "backfill", "job": "orders-backfill", "job_ids": [_t015_job],
		"branch": "backfill-2025q3", "wap_id": null, "identified": true, "matched": 2,
		"snapshots": [_t015_snap(11, ["backfill-2025q3"]), _t015_snap(12, ["backfill-2025q3"])],
		"snapshots_truncated": 0, "range": null,
	},
	patch,
)

_t015_input(items) := ice_input({"backfills": {"branches": {}, "walk": 10000, "items": items}})

_t015(items) := out if {
	findings := deny with input as _t015_input(items)
	out := ice_rules(findings, "SW-TABLE-015")
}

test_table015_commits_on_the_declared_branch_pass if {
	count(_t015([_t015_item({})])) == 0
}

test_table015_commits_on_main_fire_naming_snapshots_and_ref if {
	item := _t015_item({"snapshots": [_t015_snap(11, ["main"]), _t015_snap(12, ["main"]), _t015_snap(13, ["backfill-2025q3"])]})
	[f] := _t015([item])
	f.path == "fork_of.branch"
	f.value == "fork_of@main"
	f.message == `backfill "orders-backfill" (job bfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbf, declared at fork_of) committed snapshots 11, 12 to branch "main" of sales.orders (catalog lake), outside its declared branch "backfill-2025q3": its data is in what the owner's readers see before anyone audited it`
	f.evidence.snapshot_ids == [11, 12]
	f.evidence.ref == "main"
}

test_table015_one_finding_per_other_branch if {
	item := _t015_item({"snapshots": [_t015_snap(11, ["main"]), _t015_snap(12, ["audit"])]})
	{f.evidence.ref | some f in _t015([item])} == {"main", "audit"}
}

test_table015_a_fast_forward_keeps_them_on_both_and_passes if {
	item := _t015_item({"snapshots": [_t015_snap(11, ["backfill-2025q3", "main"])]})
	count(_t015([item])) == 0
}

test_table015_staged_snapshots_on_no_branch_pass if {
	item := _t015_item({"branch": null, "wap_id": "replay-42", "job_ids": [], "snapshots": [_t015_snap(11, [])]})
	count(_t015([item])) == 0
}

test_table015_wap_only_declaration_names_its_wap_id_for_a_range if {
	item := _t015_item({"branch": null, "wap_id": "replay-42", "job_ids": [], "job": null, "range": _t015_range([_t015_bounds(11, 20300, 20400)])})
	[f] := _t015([item])
	startswith(f.message, `backfill (WAP id "replay-42", declared at fork_of) wrote data outside`)
}

test_table015_owner_side_declaration_on_main_passes if {
	item := _t015_item({"path": "backfills[0]", "branch": "main", "snapshots": [_t015_snap(11, ["main"])]})
	count(_t015([item])) == 0
}

test_table015_owner_side_declaration_fires_at_its_entry if {
	item := _t015_item({"path": "backfills[0]", "snapshots": [_t015_snap(11, ["main"])]})
	[f] := _t015([item])
	f.path == "backfills[0].branch"
}

test_table015_many_snapshots_are_counted if {
	snaps := [_t015_snap(i, ["main"]) | some i in numbers.range(1, 7)]
	[f] := _t015([_t015_item({"snapshots": snaps})])
	contains(f.message, "snapshots 1, 2, 3, 4, 5 and 2 more to branch")
	f.evidence.snapshot_count == 7
}

test_table015_inside_the_range_passes if {
	# the first partition ends on from's day, the last starts the day before to
	item := _t015_item({"range": _t015_range([_t015_bounds(11, 20270, 20361)])})
	count(_t015([item])) == 0
}

test_table015_a_partition_after_the_range_fires if {
	item := _t015_item({"range": _t015_range([_t015_bounds(11, 20300, 20362), _t015_bounds(12, 20300, 20310)])})
	[f] := _t015([item])
	f.path == "fork_of.range"
	f.message == `backfill "orders-backfill" (job bfbfbfbfbfbfbfbfbfbfbfbfbfbfbfbf, declared at fork_of) wrote data outside its declared range [2025-07-01, 2025-10-01) of column event_time in sales.orders (catalog lake): snapshot 11: partition event_time_day=20362, at or after 2025-10-01 (judged by partition event_time_day (day of date), from the manifests)`
	f.evidence.snapshots == [{"snapshot_id": 11, "lowest": "partition event_time_day=20300", "highest": "partition event_time_day=20362", "below_from": false, "at_or_after_to": true}]
}

test_table015_a_partition_before_the_range_fires if {
	item := _t015_item({"range": _t015_range([_t015_bounds(11, 20269, 20300)])})
	[f] := _t015([item])
	contains(f.message, "snapshot 11: partition event_time_day=20269, before 2025-07-01")
	not contains(f.message, "at or after")
}

test_table015_both_sides_in_one_snapshot if {
	item := _t015_item({"range": _t015_range([_t015_bounds(11, 20000, 20400)])})
	[f] := _t015([item])
	contains(f.message, "before 2025-07-01, partition event_time_day=20400, at or after 2025-10-01")
}

test_table015_many_snapshots_out_of_range_are_counted if {
	item := _t015_item({"range": _t015_range([_t015_bounds(i, 20400, 20400) | some i in numbers.range(1, 6)])})
	[f] := _t015([item])
	contains(f.message, "; 1 more snapshots (judged by")
	f.evidence.snapshot_count == 6
}

test_table015_a_range_not_checked_is_silent if {
	r := object.union(_t015_range([_t015_bounds(11, 1, 99999)]), {"checked": false, "reason": "the table has no column 'x'"})
	count(_t015([_t015_item({"range": r})])) == 0
}

test_table015_branch_and_range_both_fire if {
	item := _t015_item({"snapshots": [_t015_snap(11, ["main"])], "range": _t015_range([_t015_bounds(11, 20400, 20400)])})
	{f.path | some f in _t015([item])} == {"fork_of.branch", "fork_of.range"}
}

test_table015_silent_without_backfills_facts if {
	findings := deny with input as ice_input({})
	count(ice_rules(findings, "SW-TABLE-015")) == 0
}
