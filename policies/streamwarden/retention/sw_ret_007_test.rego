package streamwarden.retention

import rego.v1

import data.streamwarden.lib

_rst_plan(extra) := object.union(
	{
		"job_id": "4d986ca01ddda5a426cdee76cc7caaf6",
		"checkpoint_id": 12,
		"max_committed_checkpoint_id": 20,
		"matching_snapshot": null,
		"matching_missing": "expired",
	},
	extra,
)

_rst_input(table, retained) := {
	"contract": lib.example_contract,
	"facts": object.union(lib.example_input.facts, {
		"savepoint": {
			"available": true, "configured": true, "location": "s3://sp/savepoint-4d986c-1a2b3c4d5e6f",
			"checkpoint_id": 12, "table": table, "retained": retained,
		},
		"flink": {"available": true, "configured": true, "job_id": "4d986ca01ddda5a426cdee76cc7caaf6"},
	}),
	"now_ms": 1764000000000,
	"mode": "gate",
}

_rst_retained(id, extra) := object.union(
	{
		"checkpoint_id": id, "is_savepoint": false, "external_path": sprintf("s3://ckpt/4d98/chk-%v", [id]),
		"at_or_below_committed": true, "max_committed_checkpoint_id": 20, "matching_snapshot_id": null,
		"matching_missing": "expired",
	},
	extra,
)

test_ret007_savepoint_whose_snapshot_was_expired_fires if {
	inp := _rst_input(_rst_plan({}), [])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-007") == {"retention.snapshots.max_age"}
	some f in findings
	f.rule == "SW-RET-007"
	f.message == "the savepoint to restore (s3://sp/savepoint-4d986c-1a2b3c4d5e6f) at checkpoint 12 is at or below the table's max committed checkpoint 20 for job 4d986ca01ddda5a426cdee76cc7caaf6, but the snapshot holding the table as of that checkpoint has been expired: restoring it leaves no table state to roll back to"
}

test_ret007_savepoint_with_its_snapshot_passes if {
	plan := _rst_plan({"matching_snapshot": {"snapshot_id": 7012, "checkpoint_id": 12}, "matching_missing": null})
	inp := _rst_input(plan, [])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-007")
}

test_ret007_savepoint_at_the_max_committed_checkpoint_is_judged if {
	inp := _rst_input(_rst_plan({"max_committed_checkpoint_id": 12}), [])
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-RET-007")) == 1
}

test_ret007_savepoint_newer_than_the_last_commit_is_not_committed_yet if {
	inp := _rst_input(_rst_plan({"max_committed_checkpoint_id": 11}), [])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-007")
}

test_ret007_job_that_committed_later_never_had_a_snapshot_to_lose if {
	inp := _rst_input(_rst_plan({"matching_missing": "never_committed"}), [])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-007")
}

test_ret007_retained_checkpoint_whose_snapshot_was_expired_fires if {
	inp := _rst_input(null, [_rst_retained(9, {}), _rst_retained(19, {"matching_snapshot_id": 7019, "matching_missing": null})])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-RET-007"
	f.value == {"job_id": "4d986ca01ddda5a426cdee76cc7caaf6", "checkpoint_id": 9}
	startswith(f.message, "retained checkpoint s3://ckpt/4d98/chk-9 at checkpoint 9 is at or below")
	count([x | some x in findings; x.rule == "SW-RET-007"]) == 1
}

test_ret007_retained_checkpoint_above_the_last_commit_passes if {
	inp := _rst_input(null, [_rst_retained(21, {"at_or_below_committed": false})])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-RET-007")
}

test_ret007_candidate_reported_once_not_again_as_retained if {
	inp := _rst_input(_rst_plan({}), [_rst_retained(12, {"is_savepoint": true})])
	findings := deny with input as inp
	count([x | some x in findings; x.rule == "SW-RET-007"]) == 1
}

test_ret007_path_falls_back_to_the_rollback_window if {
	contract := json.remove(lib.example_contract, ["retention/snapshots"])
	inp := json.patch(_rst_input(_rst_plan({}), []), [{"op": "replace", "path": "/contract", "value": contract}])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-RET-007") == {"retention.rollback_window"}
}
