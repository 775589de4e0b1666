package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

_r7_rollback := {
	"kind": "rollback", "branch": "main", "timestamp_ms": 1764000600000, "snapshot_id": 101, "from_snapshot_id": 103,
	"removed_snapshot_ids": [103, 102], "removed_count": 2, "flink_job_ids": ["aaaa"], "metadata_file": "file:/m/00003.metadata.json",
}

_r7_reset := object.union(_r7_rollback, {"kind": "reset", "snapshot_id": 201, "removed_snapshot_ids": [103], "removed_count": 1, "flink_job_ids": []})

_r7_pick := {"kind": "cherry_pick", "branch": "main", "timestamp_ms": 1764000700000, "snapshot_id": 301, "source_snapshot_id": 299, "published_wap_id": null, "flink_job_ids": []}

_r7_delete(written) := {
	"kind": "delete", "branch": "main", "timestamp_ms": 1764000800000, "snapshot_id": 401, "operation": "delete",
	"deleted_data_files": 1, "deleted_records": 2, "added_delete_files": null, "added_records": null,
	"removed_from_snapshot_ids": [102], "flink_job_ids": ["aaaa"], "flink_written": written,
}

_r7_loss := {
	"snapshot_id": 401, "parent_id": 400, "after_snapshot_id": 402, "timestamp_ms": 1764000800000, "operation": "delete",
	"key_columns": ["order_id"], "removed_files": 1, "files_read": 1, "keys_checked": 2, "duplicated_keys": 2, "lost_keys": 1,
	"lost": [{"key": {"order_id": 3}, "copies_before": 2}], "truncated": false, "checked": true, "reason": null,
}

_r7_contract(require, consumers) := {
	"metadata": {"name": "orders", "consumers": consumers},
	"table": {"catalog": "lake", "identifier": "sales.orders"},
	"recovery": {"require_ledger": require},
}

_r7_input(changes, cleanups, rows, contract) := {
	"contract": contract,
	"facts": {"iceberg": {
		"available": true, "configured": true, "catalog": "lake", "identifier": "sales.orders", "branch": "main",
		"history": {"available": true, "error": null, "changes": changes, "cleanups": cleanups},
	}},
	"ledger": {"configured": true, "table": "ops.ledger", "rows": rows},
	"now_ms": 1764001000000,
}

_r7_row(fields) := object.union(
	{
		"decision_id": "d1", "recorded_at_ms": 1764000500000, "verb": "gate", "decision": "allow", "pipeline": "orders",
		"environment": "prod", "table_identifier": "sales.orders", "restore_snapshot_id": null,
		"rollback_target_snapshot_id": null, "replay_snapshot_ids": [], "checkpoint_id": 7, "savepoint_path": "s3://sp/1",
	},
	fields,
)

_r7_consumers := [{"name": "finance-bi", "contact": "bi@example.com"}]

_r7_hits(inp) := hits if {
	d := deny with input as inp
	w := warn with input as inp
	both := d | w
	hits := [x | some x in both; x.rule == "SW-REC-007"]
}

test_rec007_clean_history_passes if {
	count(_r7_hits(_r7_input([], [], [], _r7_contract(true, _r7_consumers)))) == 0
}

test_rec007_no_history_section_is_silent if {
	inp := json.remove(_r7_input([], [], [], _r7_contract(true, _r7_consumers)), ["facts/iceberg/history"])
	count(_r7_hits(inp)) == 0
}

test_rec007_table_not_read_is_silent if {
	inp := json.patch(_r7_input([_r7_rollback], [_r7_loss], [], _r7_contract(false, [])), [{"op": "replace", "path": "/facts/iceberg/available", "value": false}])
	count(_r7_hits(inp)) == 0
}

test_rec007_unexplained_rollback_warns if {
	inp := _r7_input([_r7_rollback], [], [], _r7_contract(false, _r7_consumers))
	d := deny with input as inp
	count([x | some x in d; x.rule == "SW-REC-007"]) == 0
	[f] := _r7_hits(inp)
	f.message == "branch main of sales.orders (catalog lake) was rolled back from snapshot 103 to snapshot 101: 2 snapshot(s) left its history (103, 102), committed by Flink job(s) aaaa, and no recovery ledger row explains it"
	f.path == "table.identifier"
	f.value == "rollback/101"
	f.source == "iceberg"
	f.evidence.removed_snapshot_ids == [103, 102]
	f.evidence.ledger_configured == true
	not f.evidence.metadata_file
	object.get(f, "severity", null) == null
}

test_rec007_without_a_ledger_input_the_rollback_warns if {
	inp := json.remove(_r7_input([_r7_rollback], [], [], _r7_contract(false, [])), ["ledger"])
	[f] := _r7_hits(inp)
	f.evidence.ledger_configured == false
}

test_rec007_required_ledger_with_consumers_denies if {
	inp := _r7_input([_r7_rollback], [], [], _r7_contract(true, _r7_consumers))
	d := deny with input as inp
	w := warn with input as inp
	[f] := [x | some x in d; x.rule == "SW-REC-007"]
	f.severity == "error"
	endswith(f.message, "and no recovery ledger row explains it (recovery.require_ledger: the table has consumers finance-bi)")
	count([x | some x in w; x.rule == "SW-REC-007"]) == 0
}

test_rec007_required_ledger_without_consumers_only_warns if {
	inp := _r7_input([_r7_rollback], [], [], _r7_contract(true, []))
	d := deny with input as inp
	w := warn with input as inp
	count([x | some x in d; x.rule == "SW-REC-007"]) == 0
	count([x | some x in w; x.rule == "SW-REC-007"]) == 1
}

test_rec007_rollback_explained_by_its_target if {
	row := _r7_row({"rollback_target_snapshot_id": 101})
	count(_r7_hits(_r7_input([_r7_rollback], [], [row], _r7_contract(true, _r7_consumers)))) == 0
}

test_rec007_rollback_explained_by_the_restore_snapshot if {
	row := _r7_row({"restore_snapshot_id": 101})
	count(_r7_hits(_r7_input([_r7_rollback], [], [row], _r7_contract(true, _r7_consumers)))) == 0
}

test_rec007_rollback_explained_by_its_replayed_snapshots if {
	row := _r7_row({"replay_snapshot_ids": [102]})
	count(_r7_hits(_r7_input([_r7_rollback], [], [row], _r7_contract(true, _r7_consumers)))) == 0
}

test_rec007_rollback_explained_with_the_catalog_in_the_table_name if {
	row := _r7_row({"rollback_target_snapshot_id": 101, "table_identifier": "lake.sales.orders"})
	count(_r7_hits(_r7_input([_r7_rollback], [], [row], _r7_contract(true, _r7_consumers)))) == 0
}

test_rec007_a_row_of_another_table_explains_nothing if {
	row := _r7_row({"rollback_target_snapshot_id": 101, "table_identifier": "sales.refunds"})
	count(_r7_hits(_r7_input([_r7_rollback], [], [row], _r7_contract(true, _r7_consumers)))) == 1
}

test_rec007_a_row_naming_another_target_explains_nothing if {
	row := _r7_row({"rollback_target_snapshot_id": 100, "replay_snapshot_ids": [99]})
	count(_r7_hits(_r7_input([_r7_rollback], [], [row], _r7_contract(true, _r7_consumers)))) == 1
}

test_rec007_malformed_rows_are_ignored if {
	rows := ["not a row", _r7_row({"replay_snapshot_ids": "102"})]
	count(_r7_hits(_r7_input([_r7_rollback], [], rows, _r7_contract(false, [])))) == 1
}

test_rec007_reset_onto_another_lineage if {
	[f] := _r7_hits(_r7_input([_r7_reset], [], [], _r7_contract(false, [])))
	f.message == "branch main of sales.orders (catalog lake) moved from snapshot 103 to snapshot 201, which is not its descendant: 1 snapshot(s) left its history (103), and no recovery ledger row explains it"
	f.value == "reset/201"
}

test_rec007_unexplained_cherry_pick if {
	[f] := _r7_hits(_r7_input([_r7_pick], [], [], _r7_contract(false, [])))
	f.message == "snapshot 301 on branch main of sales.orders (catalog lake) is a cherry-pick of snapshot 299, and no recovery ledger row explains it"
}

test_rec007_cherry_pick_explained_by_its_source if {
	row := _r7_row({"replay_snapshot_ids": [299]})
	count(_r7_hits(_r7_input([_r7_pick], [], [row], _r7_contract(false, [])))) == 0
}

test_rec007_delete_of_flink_data if {
	[f] := _r7_hits(_r7_input([_r7_delete(true)], [], [], _r7_contract(false, [])))
	f.message == "delete snapshot 401 on branch main of sales.orders (catalog lake) removed 1 data file(s) and 2 record(s) that Flink job(s) aaaa wrote, and no recovery ledger row explains it"
}

test_rec007_delete_of_unknown_writer_counts if {
	d := object.union(_r7_delete(null), {"flink_job_ids": [], "deleted_data_files": null, "deleted_records": null})
	[f] := _r7_hits(_r7_input([d], [], [], _r7_contract(false, [])))
	endswith(f.message, "removed 0 data file(s) and 0 record(s) whose writer cannot be told (the table is written by Flink), and no recovery ledger row explains it")
}

test_rec007_delete_of_other_data_passes if {
	d := object.union(_r7_delete(false), {"flink_job_ids": []})
	count(_r7_hits(_r7_input([d], [], [], _r7_contract(true, _r7_consumers)))) == 0
}

test_rec007_delete_explained_by_its_replayed_snapshots if {
	row := _r7_row({"replay_snapshot_ids": [102]})
	count(_r7_hits(_r7_input([_r7_delete(true)], [], [row], _r7_contract(false, [])))) == 0
}

test_rec007_delete_explained_by_its_own_snapshot if {
	row := _r7_row({"rollback_target_snapshot_id": 401})
	count(_r7_hits(_r7_input([_r7_delete(true)], [], [row], _r7_contract(false, [])))) == 0
}

test_rec007_lost_rows_are_an_error_whatever_the_ledger_says if {
	row := _r7_row({"replay_snapshot_ids": [102]})
	inp := _r7_input([_r7_delete(true)], [_r7_loss], [row], _r7_contract(false, []))
	[f] := _r7_hits(inp)
	f.severity == "error"
	f.message == `delete (snapshot 401) on branch main of sales.orders (catalog lake) removed every copy of 1 row(s) that had two or more before it (snapshot 400), and they are still gone at snapshot 402: data loss, e.g. {"order_id":3} (2 copies before)`
	f.evidence.kind == "data_loss"
	f.evidence.lost == [{"key": {"order_id": 3}, "copies_before": 2}]
	f.value == "data_loss/401"
}

test_rec007_a_clean_up_that_kept_one_copy_passes if {
	kept := object.union(_r7_loss, {"lost_keys": 0, "lost": []})
	row := _r7_row({"replay_snapshot_ids": [102]})
	count(_r7_hits(_r7_input([_r7_delete(true)], [kept], [row], _r7_contract(false, [])))) == 0
}
