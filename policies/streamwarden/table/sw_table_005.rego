package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: The table must receive commits as often as the contract says
# description: |
#   Fires when the newest snapshot of the checked branch is older than table.commit.max_interval
#   (now minus its timestamp; equal is fine). Silent when the Flink facts show the job is not
#   supposed to run (FINISHED or CANCELED); a FAILED, RESTARTING or missing job still fires, and
#   without Flink facts the table alone decides. Silent for a table with no snapshot yet. An idle
#   but healthy job still commits: the Iceberg sink writes an empty snapshot after
#   flink.max-continuous-empty-commits (default 10) empty checkpoints.
# custom:
#   id: SW-TABLE-005
#   severity: error
#   remediation: |
#     Find out why the job stopped committing (failing checkpoints, a stuck committer, a stopped
#     job) and fix it, or raise table.commit.max_interval if the promise was too tight.
#   example: |
#     table: {commit: {max_interval: 5m}}   # the newest snapshot is 2h old and the job is RUNNING
deny contains f if {
	max_interval := _table.commit.max_interval
	is_number(max_interval)
	head := _ice.snapshots.head
	is_object(head)
	age := input.now_ms - head.timestamp_ms
	age > max_interval
	not _ice_job_stopped
	f := lib.finding(
		"SW-TABLE-005",
		"table.commit.max_interval",
		sprintf(
			"the newest snapshot of %s on branch %s (%v) is %s old, above table.commit.max_interval %s%s",
			[_ice_name, _ice.branch, head.snapshot_id, lib.fmt_age(age), lib.fmt_ms(max_interval), _ice_state_note]
		),
		{
			"snapshot_id": head.snapshot_id,
			"timestamp_ms": head.timestamp_ms,
			"age_ms": age,
			"max_interval": max_interval,
			"job_id": head.job_id,
			"checkpoint_id": head.checkpoint_id,
			"flink_state": _ice_flink_state,
		},
		{"source": "iceberg"},
	)
}
