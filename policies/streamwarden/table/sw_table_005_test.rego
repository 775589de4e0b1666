package streamwarden.table

import rego.v1

import data.streamwarden.lib

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
