package streamwarden.table

import rego.v1

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
