package streamwarden.table

import rego.v1

import data.streamwarden.lib

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
