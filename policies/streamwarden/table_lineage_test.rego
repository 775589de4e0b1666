package streamwarden.table

import rego.v1

import data.streamwarden.lib

# Fixtures (ice_clean_facts, ice_input, ice_input2, ice_rules, ice_job_a/b, ice_op) live in
# table_iceberg_test.rego.

_t_lineage(patch) := ice_input({"lineage": patch})

_t_flink(flink) := object.union(ice_input({"snapshots": {"head": object.union(ice_head, {"timestamp_ms": 1763990000000})}}), {"facts": {"flink": flink}})

# ---------------------------------------------------------------- SW-TABLE-005

test_table005_stale_head_fires_on_the_table_alone if {
	inp := ice_input({"snapshots": {"head": object.union(ice_head, {"timestamp_ms": 1763990000000})}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-005")
	f.path == "table.commit.max_interval"
	f.source == "iceberg"
	f.evidence.snapshot_id == 5003
	f.evidence.age_ms == 10000000
	f.evidence.checkpoint_id == 12
	contains(f.message, "(5003) is 2h46m40s old, above table.commit.max_interval 5m")
}

test_table005_boundary_equal_age_passes if {
	inp := ice_input({"snapshots": {"head": object.union(ice_head, {"timestamp_ms": 1763999700000})}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-005")
}

test_table005_one_ms_over_fires if {
	inp := ice_input({"snapshots": {"head": object.union(ice_head, {"timestamp_ms": 1763999699999})}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-005") == {"table.commit.max_interval"}
}

test_table005_job_stopped_by_operator_is_silent if {
	inp := _t_flink({"available": true, "configured": true, "job_found": true, "state": "FINISHED"})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-005")
	inp2 := _t_flink({"available": true, "configured": true, "job_found": true, "state": "CANCELED"})
	findings2 := deny with input as inp2
	lib.no_rule(findings2, "SW-TABLE-005")
}

test_table005_failed_job_still_fires if {
	inp := _t_flink({"available": true, "configured": true, "job_found": true, "state": "FAILED"})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-005")
	f.evidence.flink_state == "FAILED"
	contains(f.message, "(the Flink job is FAILED)")
}

test_table005_unavailable_flink_facts_fire_on_the_table if {
	inp := _t_flink({"available": false, "configured": true, "error": "connection refused"})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-005") == {"table.commit.max_interval"}
}

test_table005_empty_table_is_silent if {
	inp := ice_input({"snapshots": {"head": null}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-005")
}

# ---------------------------------------------------------------- SW-TABLE-007

_t_missing := {"missing": ["flink.operator-id"], "job_id": ice_job_a, "operation": "append", "count": 2, "snapshot_ids": [5002, 5003]}

test_table007_missing_key_with_lineage_required if {
	inp := _t_lineage({"missing_lineage": [_t_missing]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-007")
	f.path == "table.commit.lineage"
	f.evidence.snapshot_ids == [5002, 5003]
	contains(f.message, "2 append snapshot(s) on branch main of sales.orders (catalog lake) lack flink.operator-id")
	contains(f.message, "snapshots 5002, 5003")
	contains(f.message, sprintf("(job \"%s\")", [ice_job_a]))
}

test_table007_without_a_job_id_says_no_job_is_known if {
	stranger := object.union(_t_missing, {"job_id": null, "missing": ["flink.job-id", "flink.operator-id", "flink.max-committed-checkpoint-id"], "count": 1, "snapshot_ids": [5004]})
	inp := _t_lineage({"missing_lineage": [stranger]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-007")
	not contains(f.message, "null")
	contains(f.message, "flink.max-committed-checkpoint-id (no job known: they carry no flink.job-id): snapshots 5004")
}

test_table007_lineage_optional_is_silent if {
	inp := object.union(_t_lineage({"missing_lineage": [_t_missing]}), {"contract": {"table": {"commit": {"lineage": "optional"}}}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-007")
}

# ---------------------------------------------------------------- SW-TABLE-008

test_table008_checkpoint_committed_twice if {
	dup := {"job_id": ice_job_a, "operator_id": ice_op, "checkpoint_id": 11, "snapshot_ids": [5001, 5002], "count": 2}
	inp := _t_lineage({"duplicates": [dup]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-008")
	f.path == "table.identifier"
	f.value == sprintf("%s/%s/11", [ice_job_a, ice_op])
	f.evidence == {"job_id": ice_job_a, "operator_id": ice_op, "checkpoint_id": 11, "snapshot_ids": [5001, 5002]}
	contains(f.message, "checkpoint 11 of job a1a1")
	contains(f.message, "committed 2 times")
}

# ---------------------------------------------------------------- SW-TABLE-009

_t_back(kind, prev_job) := {
	"kind": kind,
	"job_id": ice_job_b,
	"operator_id": ice_op,
	"snapshot_id": 5003,
	"checkpoint_id": 8,
	"previous_job_id": prev_job,
	"previous_snapshot_id": 5002,
	"previous_checkpoint_id": 12,
}

test_table009_same_job_goes_backwards if {
	inp := _t_lineage({"backwards": [_t_back("same_job", ice_job_b)]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-009")
	f.evidence.checkpoint_id == 8
	f.evidence.previous_checkpoint_id == 12
	contains(f.message, "committed checkpoint 8 (snapshot 5003) after checkpoint 12 (snapshot 5002)")
}

test_table009_new_job_restored_from_older_checkpoint if {
	inp := _t_lineage({"backwards": [_t_back("new_job", ice_job_a)]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-009")
	f.evidence.previous_job_id == ice_job_a
	contains(f.message, "took over operator")
	contains(f.message, "(a restore under a new job id, not a fork: job a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 committed nothing after it), checkpoints 8..12 may be replayed")
}

test_table009_new_job_recommits_the_last_checkpoint_of_its_predecessor if {
	recommit := object.union(_t_back("new_job", ice_job_a), {"checkpoint_id": 12})
	inp := _t_lineage({"backwards": [recommit]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-009")
	f.evidence.checkpoint_id == 12
	f.evidence.previous_checkpoint_id == 12
	contains(f.message, "committed checkpoint 12 again (snapshot 5003) when it took over operator")
	contains(f.message, "re-committed its predecessor's last checkpoint under the new job id")
	not contains(f.message, "restored from an older checkpoint")
}

# ---------------------------------------------------------------- SW-TABLE-010

_t_pair(declared_by) := {
	"job_ids": [ice_job_a, ice_job_b],
	"declared_by": declared_by,
	"pattern": [
		{"job_id": ice_job_a, "snapshot_id": 5001, "checkpoint_id": 10},
		{"job_id": ice_job_b, "snapshot_id": 5002, "checkpoint_id": 3},
		{"job_id": ice_job_a, "snapshot_id": 5003, "checkpoint_id": 11},
	],
	"snapshot_counts": [2, 1],
}

test_table010_undeclared_fork if {
	inp := _t_lineage({"interleavings": [_t_pair(null)]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-010")
	f.path == "backfills"
	f.evidence.job_ids == [ice_job_a, ice_job_b]
	contains(f.message, "snapshot 5001 by job a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 (checkpoint 10) then snapshot 5002 by job b2b2")
	endswith(f.message, "an undeclared fork, two jobs writing at the same time (a restore hands over from one job id to the next without interleaving)")
}

test_table010_declared_by_job_id_in_facts if {
	inp := _t_lineage({"interleavings": [_t_pair(ice_job_b)]})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-010")
}

test_table010_declared_by_job_id_in_contract if {
	backfill := {"job": "orders-backfill", "job_id": upper(ice_job_b), "branch": "backfill", "reason": "replay March"}
	inp := object.union(_t_lineage({"interleavings": [_t_pair(null)]}), {"contract": {"backfills": [backfill]}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-010")
}

test_table010_declared_by_job_name_through_flink_facts if {
	backfill := {"job": "orders-backfill", "branch": "backfill", "reason": "replay March"}
	flink := {"available": true, "configured": true, "jobs": [{"id": ice_job_b, "name": "orders-backfill", "state": "finished"}]}
	inp := object.union(_t_lineage({"interleavings": [_t_pair(null)]}), {"contract": {"backfills": [backfill]}, "facts": {"flink": flink}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-010")
}

test_table010_job_name_without_flink_facts_is_not_enough if {
	backfill := {"job": "orders-backfill", "branch": "backfill", "reason": "replay March"}
	inp := object.union(_t_lineage({"interleavings": [_t_pair(null)]}), {"contract": {"backfills": [backfill]}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-010") == {"backfills"}
}

# ---------------------------------------------------------------- SW-TABLE-011

test_table011_file_added_twice if {
	dup := {"path": "s3://lake/orders/data/00000-0-x.parquet", "snapshot_ids": [5001, 5002], "entries": 2, "kind": "two_snapshots"}
	inp := ice_input({"files": {"scanned": true, "duplicates": [dup]}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-011")
	f.value == "s3://lake/orders/data/00000-0-x.parquet"
	f.evidence.snapshot_ids == [5001, 5002]
}

test_table011_silent_when_files_not_read if {
	inp := ice_input({"files": {"scanned": false, "error": "manifest reads were turned off"}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-011")
}

# ---------------------------------------------------------------- SW-TABLE-012

test_table012_out_of_band_writer if {
	g := {"operation": "overwrite", "writer": "spark", "count": 1, "snapshot_ids": [4711]}
	inp := _t_lineage({"out_of_band": [g]})
	findings := warn with input as inp
	[f] := ice_rules(findings, "SW-TABLE-012")
	f.value == "overwrite/spark"
	f.evidence.snapshot_ids == [4711]
	contains(f.message, `1 overwrite snapshot(s) on branch main of sales.orders (catalog lake) carry no Flink lineage (writer "spark")`)
}

test_table012_no_strangers_pass if {
	inp := _t_lineage({"out_of_band": []})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-TABLE-012")
}
