package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: A rollback, cherry-pick or delete of Flink-written data must leave a trace
# description: |
#   Reads the table's history (facts.iceberg.history: the previous metadata files, the snapshot
#   log, the checked branch's snapshots) and the recovery ledger (input.ledger; absent means no
#   ledger and no rows). Fires for each change a ledger row of the table does not explain:
#   the branch moved back to an older snapshot or onto another lineage (snapshots left its
#   history), a cherry-pick, or a delete or overwrite, not committed by the Flink sink, that
#   removed data a Flink commit wrote (or whose writer cannot be told). A ledger row explains a
#   change when it names this table (table_identifier, with or without the catalog) and: for a
#   rollback, its rollback_target_snapshot_id or restore_snapshot_id is the snapshot the branch
#   moved to, or its replay_snapshot_ids hold a snapshot that left the history; for a cherry-pick,
#   one of its snapshot ids is the picked snapshot or its source; for a delete, one of its
#   snapshot ids is the delete's, or its replay_snapshot_ids hold a snapshot whose data the delete
#   removed. A warning; an error when the table has consumers (metadata.consumers) and the
#   contract sets recovery.require_ledger: true. Separately, a clean-up after a duplicate (a
#   delete or overwrite following a checkpoint committed twice) that removed every copy of a row
#   that had two or more (by the table's identifier fields, else quality.unique, else every
#   primitive column; still absent at the branch's head) lost data: an error whatever the ledger
#   says. Only the newest metadata files are read (docs/facts-iceberg.md).
# custom:
#   id: SW-REC-007
#   severity: warning
#   remediation: |
#     Record the recovery decision that made the change (streamwarden gate --record or evidence
#     --record), or, if nobody decided it, find who changed the table and why. For lost rows:
#     restore them from the snapshot before the clean-up (the finding names it and the keys), once.
#   example: |
#     # branch main of sales.orders moved from snapshot 102 back to 101; no ledger row names 101
#     recovery:
#       require_ledger: true
warn contains f if {
	some c in _rec7_unexplained
	not _rec7_required
	f := _rec7_finding(c)
}

deny contains f if {
	some c in _rec7_unexplained
	_rec7_required
	f := object.union(_rec7_finding(c), {"severity": "error"})
}

# SW-REC-007: a clean-up removed every copy of a duplicated row (data loss).
deny contains f if {
	some c in object.get(_rec7_history, "cleanups", [])
	c.lost_keys > 0
	f := lib.finding(
		"SW-REC-007",
		"table.identifier",
		sprintf(
			"%s (snapshot %v) on branch %s of %s removed every copy of %v row(s) that had two or more before it (snapshot %v), and they are still gone at snapshot %v: data loss, e.g. %s",
			[c.operation, c.snapshot_id, _rec7_ice.branch, lib.iceberg_name(_rec7_ice), c.lost_keys, c.parent_id, c.after_snapshot_id, _rec7_keys(c.lost)],
		),
		{
			"kind": "data_loss",
			"snapshot_id": c.snapshot_id,
			"parent_id": c.parent_id,
			"after_snapshot_id": c.after_snapshot_id,
			"key_columns": c.key_columns,
			"lost_keys": c.lost_keys,
			"lost": c.lost,
		},
		{"severity": "error", "source": "iceberg", "value": sprintf("data_loss/%v", [c.snapshot_id])},
	)
}

_rec7_ice := lib.iceberg(input)

_rec7_history := h if {
	h := _rec7_ice.history
	is_object(h)
} else := {}

_rec7_required if {
	object.get(input.contract, ["recovery", "require_ledger"], false) == true
	count(lib.consumer_names(input.contract)) > 0
}

_rec7_rows := [r |
	some r in object.get(input, ["ledger", "rows"], [])
	is_object(r)
	_rec7_same_table(r)
]

_rec7_same_table(r) if r.table_identifier == _rec7_ice.identifier

_rec7_same_table(r) if r.table_identifier == sprintf("%s.%s", [_rec7_ice.catalog, _rec7_ice.identifier])

_rec7_list(r, k) := xs if {
	xs := object.get(r, k, [])
	is_array(xs)
} else := []

_rec7_ids(r) := ids if {
	named := {x |
		some k in ["restore_snapshot_id", "rollback_target_snapshot_id"]
		x := object.get(r, k, null)
		is_number(x)
	}
	ids := named | {x | some x in _rec7_list(r, "replay_snapshot_ids")}
}

_rec7_considered(c) if c.kind in {"rollback", "reset", "cherry_pick"}

# a delete of data a Flink commit wrote, or whose writer cannot be told
_rec7_considered(c) if {
	c.kind == "delete"
	object.get(c, "flink_written", null) != false
}

_rec7_unexplained contains c if {
	some c in object.get(_rec7_history, "changes", [])
	_rec7_considered(c)
	not _rec7_explained(c)
}

_rec7_explained(c) if {
	c.kind in {"rollback", "reset"}
	some r in _rec7_rows
	c.snapshot_id in {object.get(r, "rollback_target_snapshot_id", null), object.get(r, "restore_snapshot_id", null)}
}

_rec7_explained(c) if {
	c.kind in {"rollback", "reset"}
	some r in _rec7_rows
	some s in c.removed_snapshot_ids
	s in _rec7_list(r, "replay_snapshot_ids")
}

_rec7_explained(c) if {
	c.kind == "cherry_pick"
	some r in _rec7_rows
	some s in [c.snapshot_id, object.get(c, "source_snapshot_id", null)]
	s in _rec7_ids(r)
}

_rec7_explained(c) if {
	c.kind == "delete"
	some r in _rec7_rows
	c.snapshot_id in _rec7_ids(r)
}

_rec7_explained(c) if {
	c.kind == "delete"
	some r in _rec7_rows
	some s in object.get(c, "removed_from_snapshot_ids", [])
	s in _rec7_list(r, "replay_snapshot_ids")
}

_rec7_finding(c) := lib.finding(
	"SW-REC-007",
	"table.identifier",
	sprintf("%s, and no recovery ledger row explains it%s", [_rec7_what(c), _rec7_tail]),
	object.union(
		{k: v | some k, v in c; k != "metadata_file"},
		{"ledger_configured": object.get(input, ["ledger", "configured"], false) == true},
	),
	{"source": "iceberg", "value": sprintf("%s/%v", [c.kind, c.snapshot_id])},
)

_rec7_tail := sprintf(" (recovery.require_ledger: the table has consumers %s)", [concat(", ", lib.consumer_names(input.contract))]) if {
	_rec7_required
} else := ""

_rec7_what(c) := sprintf(
	"branch %s of %s was rolled back from snapshot %v to snapshot %v: %v snapshot(s) left its history (%s)%s",
	[c.branch, lib.iceberg_name(_rec7_ice), c.from_snapshot_id, c.snapshot_id, c.removed_count, _rec7_list_text(c.removed_snapshot_ids), _rec7_jobs(c)],
) if {
	c.kind == "rollback"
} else := sprintf(
	"branch %s of %s moved from snapshot %v to snapshot %v, which is not its descendant: %v snapshot(s) left its history (%s)%s",
	[c.branch, lib.iceberg_name(_rec7_ice), c.from_snapshot_id, c.snapshot_id, c.removed_count, _rec7_list_text(c.removed_snapshot_ids), _rec7_jobs(c)],
) if {
	c.kind == "reset"
} else := sprintf(
	"snapshot %v on branch %s of %s is a cherry-pick of snapshot %v",
	[c.snapshot_id, c.branch, lib.iceberg_name(_rec7_ice), object.get(c, "source_snapshot_id", null)],
) if {
	c.kind == "cherry_pick"
} else := sprintf(
	"%s snapshot %v on branch %s of %s removed %v data file(s) and %v record(s) %s",
	[c.operation, c.snapshot_id, c.branch, lib.iceberg_name(_rec7_ice), _rec7_count(c, "deleted_data_files"), _rec7_count(c, "deleted_records"), _rec7_writer(c)],
)

_rec7_count(c, k) := n if {
	n := object.get(c, k, null)
	is_number(n)
} else := 0

_rec7_writer(c) := sprintf("that Flink job(s) %s wrote", [concat(", ", c.flink_job_ids)]) if {
	count(object.get(c, "flink_job_ids", [])) > 0
} else := "whose writer cannot be told (the table is written by Flink)"

_rec7_jobs(c) := sprintf(", committed by Flink job(s) %s", [concat(", ", c.flink_job_ids)]) if {
	count(object.get(c, "flink_job_ids", [])) > 0
} else := ""

_rec7_list_text(ids) := concat(", ", [sprintf("%v", [x]) | some x in ids])

_rec7_keys(lost) := concat("; ", [sprintf("%v (%v copies before)", [json.marshal(l.key), l.copies_before]) | some l in lost])
