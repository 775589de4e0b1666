package streamwarden.table

import rego.v1

import data.streamwarden.lib

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
