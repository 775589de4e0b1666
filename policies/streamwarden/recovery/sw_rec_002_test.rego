package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

test_rec002_behind_non_idempotent_without_rollback_target_fires if {
	inp := _rgt_input(_rgt_sp({}))
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-REC-002") == {"table.identifier"}
	some f in findings
	f.rule == "SW-REC-002"
	f.evidence.rollback_to.snapshot_id == 7012
	f.evidence.replay.first_checkpoint_id == 13
	f.message == "restoring checkpoint 12 of job 4d986ca01ddda5a426cdee76cc7caaf6 is behind the table's max committed checkpoint 20: the job replays checkpoints 13..20 (8 commits, 16 records, 8 data files) and the sink is not idempotent (write.upsert.enabled=false, identifier fields [], from the table), so rows are duplicated; roll the table back to snapshot 7012 (checkpoint 12) first and name it with --rollback-to 7012"
}

test_rec002_idempotent_sink_passes if {
	plan := _rgt_plan({"idempotence": {"idempotent": true, "upsert": true, "identifier_fields": ["order_id"], "source": "table"}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_upsert_without_identifier_fields_is_not_idempotent if {
	plan := _rgt_plan({"idempotence": {"idempotent": false, "upsert": true, "identifier_fields": [], "source": "table"}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-REC-002")) == 1
}

test_rec002_valid_rollback_target_passes if {
	plan := _rgt_plan({"rollback_target": {"named": "7012", "snapshot_id": 7012, "valid": true, "reason": null}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_invalid_rollback_target_says_why if {
	plan := _rgt_plan({"rollback_target": {"named": "7015", "snapshot_id": 7015, "valid": false, "reason": "snapshot 7015 already holds replayed checkpoints: rows would still be duplicated"}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	endswith(f.message, "; the named rollback target \"7015\" is not usable: snapshot 7015 already holds replayed checkpoints: rows would still be duplicated")
}

test_rec002_restore_at_the_max_committed_checkpoint_passes if {
	plan := _rgt_plan({"behind": false, "status": "current", "max_committed_checkpoint_id": 12, "replay": {"snapshots": 0}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

# The decision is the rule's alone (facts/restore.py gathers behind, replay, idempotence and the
# rollback target; no Python verdict): each of its four conditions, flipped alone, silences it.
test_rec002_behind_with_nothing_replayed_passes if {
	plan := _rgt_plan({"replay": {"snapshots": 0, "checkpoints": [], "first_checkpoint_id": null, "last_checkpoint_id": null}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_one_replayed_commit_fires if {
	plan := _rgt_plan({"max_committed_checkpoint_id": 13, "replay": {
		"snapshots": 1, "checkpoints": [13], "first_checkpoint_id": 13, "last_checkpoint_id": 13,
		"added_records": 2, "added_data_files": 1,
	}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	contains(f.message, "replays checkpoints 13..13 (1 commits, 2 records, 1 data files)")
}

test_rec002_unknown_idempotence_fails_closed if {
	plan := object.remove(_rgt_plan({}), ["idempotence"])
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-REC-002")) == 1
}

test_rec002_rollback_target_without_validity_fails_closed if {
	plan := _rgt_plan({"rollback_target": {"named": "7012", "snapshot_id": 7012}})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-REC-002")) == 1
}

test_rec002_ambiguous_job_with_an_idempotent_sink_passes if {
	plan := {"status": "unknown", "reason_code": "ambiguous_job", "reason": "several jobs", "checkpoint_id": 12, "idempotence": {"idempotent": true}}
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_expired_matching_snapshot_asks_for_a_newer_savepoint if {
	plan := _rgt_plan({"matching_snapshot": null, "matching_missing": "expired"})
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	contains(f.message, "no snapshot of the savepoint's checkpoint is left to roll back to: restore a newer savepoint")
}

test_rec002_unknown_job_fails_closed if {
	plan := {"status": "unknown", "reason_code": "ambiguous_job", "reason": "several jobs", "checkpoint_id": 12, "idempotence": {"idempotent": false}}
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-002"
	startswith(f.message, "cannot tell whether restoring checkpoint 12 replays committed data: several jobs")
}

test_rec002_table_without_commits_of_the_committer_is_silent if {
	plan := {"status": "unknown", "reason_code": "no_committer", "reason": "new table", "checkpoint_id": 12, "idempotence": {"idempotent": false}}
	inp := _rgt_with_plan(plan)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}

test_rec002_silent_without_table_facts if {
	inp := _rgt_with_plan(null)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-REC-002")
}
