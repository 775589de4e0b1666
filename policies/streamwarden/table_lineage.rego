# Table contract (SW-TABLE): commit lineage and freshness on the live table (facts.iceberg.snapshots,
# facts.iceberg.lineage, facts.iceberg.files; docs/facts-iceberg.md). Findings have "source":
# "iceberg"; helpers (_ice, _ice_name) live in table_iceberg.rego, same package; findings are
# built with lib.finding.
package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# ------------------------------------------------------------------------------------- freshness

# The Flink facts say the job is not supposed to run: stopped by an operator.
_ice_job_stopped if {
	input.facts.flink.available == true
	object.get(input.facts.flink, "job_found", true) != false
	upper(object.get(input.facts.flink, "state", "")) in {"FINISHED", "CANCELED"}
}

_ice_flink_state := input.facts.flink.state if {
	input.facts.flink.available == true
} else := null

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
	max_interval := _ice_contract_table.commit.max_interval
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

_ice_state_note := sprintf(" (the Flink job is %s)", [_ice_flink_state]) if is_string(_ice_flink_state) else := ""

# ---------------------------------------------------------------------------------------- lineage

_ice_lineage := object.get(_ice, "lineage", {})

_ice_ids(ids) := concat(", ", [sprintf("%v", [x]) | some x in ids])

# METADATA
# title: Every snapshot must carry Flink lineage when the contract requires it
# description: |
#   With table.commit.lineage: required, every snapshot in the window of the checked branch must
#   carry flink.job-id, flink.operator-id and flink.max-committed-checkpoint-id, the keys the
#   Iceberg Flink sink writes. Maintenance snapshots (operation replace: compaction, manifest
#   rewrites) are exempt. One finding per group of snapshots lacking the same keys, naming the
#   snapshot ids.
# custom:
#   id: SW-TABLE-007
#   severity: error
#   remediation: |
#     Write the table only through the Iceberg Flink sink (an Iceberg release that writes
#     flink.operator-id), route other writers through a declared backfill, or set
#     table.commit.lineage to optional.
#   example: |
#     table: {commit: {lineage: required}}   # a Spark job appended snapshot 4711 without flink.* keys
deny contains f if {
	_ice_contract_table.commit.lineage == "required"
	some g in _ice_lineage.missing_lineage
	f := lib.finding(
		"SW-TABLE-007",
		"table.commit.lineage",
		sprintf(
			"%v %s snapshot(s) on branch %s of %s lack %s (%s): snapshots %s",
			[g.count, g.operation, _ice.branch, _ice_name, concat(", ", g.missing), _t007_job(g.job_id), _ice_ids(g.snapshot_ids)],
		),
		{"missing": g.missing, "operation": g.operation, "job_id": g.job_id, "count": g.count, "snapshot_ids": g.snapshot_ids},
		{"source": "iceberg", "value": sprintf("%v/%v/%v", [concat(",", g.missing), g.operation, g.job_id])},
	)
}

# which job wrote the snapshots, or that they do not say
_t007_job(job_id) := sprintf("job %s", [lib.quote(job_id)]) if {
	is_string(job_id)
} else := "no job known: they carry no flink.job-id"

# METADATA
# title: A checkpoint must not be committed twice
# description: |
#   Fires when two snapshots along the checked branch carry the same flink.job-id,
#   flink.operator-id and flink.max-committed-checkpoint-id: the checkpoint's data files were
#   committed twice, so readers see its rows twice (the known failure after a commit whose
#   outcome was unknown, or a committer replaying its state).
# custom:
#   id: SW-TABLE-008
#   severity: error
#   remediation: |
#     Roll the table back to the snapshot before the second commit (or delete the duplicated
#     files' rows), then upgrade the Iceberg Flink sink to a release with the duplicate fix.
#   example: |
#     # snapshots 101 and 102 both carry job a1b2..., checkpoint 42
deny contains f if {
	some d in _ice_lineage.duplicates
	f := lib.finding(
		"SW-TABLE-008",
		"table.identifier",
		sprintf(
			"checkpoint %v of job %v (operator %v) was committed %v times to %s on branch %s: snapshots %s",
			[d.checkpoint_id, d.job_id, d.operator_id, d.count, _ice_name, _ice.branch, _ice_ids(d.snapshot_ids)],
		),
		{"job_id": d.job_id, "operator_id": d.operator_id, "checkpoint_id": d.checkpoint_id, "snapshot_ids": d.snapshot_ids},
		{"source": "iceberg", "value": sprintf("%v/%v/%v", [d.job_id, d.operator_id, d.checkpoint_id])},
	)
}

# METADATA
# title: A job's committed checkpoint id must not go backwards
# description: |
#   Along the checked branch's ancestry, fires when a (job, operator)'s
#   flink.max-committed-checkpoint-id drops below its previous commit, or when a job takes over
#   the sink operator from the job before it (a restore: new job id) and starts at or below the
#   checkpoint id its predecessor had already committed. Below it, the job was restored from an
#   older checkpoint or savepoint: the commits in between are replayed (duplicates), or skipped by
#   the committer (loss). At the same id, the committer committed its predecessor's last
#   checkpoint again under the new job id (it looks its last commit up by job id): that
#   checkpoint's data may be in the table twice. A restore from the latest checkpoint continues
#   above it and passes. Long.MAX_VALUE (a bounded job's end of input) never counts.
# custom:
#   id: SW-TABLE-009
#   severity: error
#   remediation: |
#     Check which savepoint the job was restored from; roll the table back to the snapshot that
#     savepoint committed (streamwarden evidence names it), or dedupe the replayed range.
#   example: |
#     # job a1b2... committed checkpoint 40 (snapshot 101), then checkpoint 35 (snapshot 102)
deny contains f if {
	some b in _ice_lineage.backwards
	f := lib.finding(
		"SW-TABLE-009",
		"table.identifier",
		_ice_backwards_message(b),
		{
			"kind": b.kind,
			"job_id": b.job_id,
			"operator_id": b.operator_id,
			"snapshot_id": b.snapshot_id,
			"checkpoint_id": b.checkpoint_id,
			"previous_job_id": b.previous_job_id,
			"previous_snapshot_id": b.previous_snapshot_id,
			"previous_checkpoint_id": b.previous_checkpoint_id,
		},
		{"source": "iceberg", "value": sprintf("%v/%v/%v", [b.job_id, b.operator_id, b.checkpoint_id])},
	)
}

_ice_backwards_message(b) := sprintf(
	"job %v committed checkpoint %v (snapshot %v) after checkpoint %v (snapshot %v) on branch %s of %s: restored from an older checkpoint, checkpoints %v..%v are replayed",
	[b.job_id, b.checkpoint_id, b.snapshot_id, b.previous_checkpoint_id, b.previous_snapshot_id, _ice.branch, _ice_name, b.checkpoint_id, b.previous_checkpoint_id],
) if {
	b.kind == "same_job"
} else := sprintf(
	"job %v committed checkpoint %v again (snapshot %v) when it took over operator %v from job %v, which had committed it (snapshot %v), on branch %s of %s: the committer re-committed its predecessor's last checkpoint under the new job id, and that checkpoint's data may be in the table twice",
	[b.job_id, b.checkpoint_id, b.snapshot_id, b.operator_id, b.previous_job_id, b.previous_snapshot_id, _ice.branch, _ice_name],
) if {
	b.checkpoint_id == b.previous_checkpoint_id
} else := sprintf(
	"job %v took over operator %v at checkpoint %v (snapshot %v), below checkpoint %v that job %v had committed (snapshot %v), on branch %s of %s: restored from an older checkpoint or started without state (a restore under a new job id, not a fork: job %v committed nothing after it), checkpoints %v..%v may be replayed",
	[b.job_id, b.operator_id, b.checkpoint_id, b.snapshot_id, b.previous_checkpoint_id, b.previous_job_id, b.previous_snapshot_id, _ice.branch, _ice_name, b.previous_job_id, b.checkpoint_id, b.previous_checkpoint_id],
)

# Job ids a backfill declares: backfills[].job_id, and backfills[].job names resolved through the
# Flink REST facts (facts.flink.jobs: [{id, name, state, start_time}]) when available.
_ice_backfill_ids contains lower(b.job_id) if {
	some b in object.get(input.contract, "backfills", [])
	is_string(b.job_id)
}

_ice_backfill_ids contains lower(id) if {
	input.facts.flink.available == true
	names := {b.job | some b in object.get(input.contract, "backfills", [])}
	some j in object.get(input.facts.flink, "jobs", [])
	j.name in names
	id := j.id
	is_string(id)
}

_ice_declared(pair) if is_string(pair.declared_by)

_ice_declared(pair) if {
	some j in pair.job_ids
	lower(j) in _ice_backfill_ids
}

# METADATA
# title: Only declared backfills may write the table beside the job
# description: |
#   Fires when snapshots from two Flink job ids interleave along the checked branch (A B A: both
#   were writing at the same time) and no declared backfill covers either job: backfills[] match
#   by job_id, or by job name resolved to ids through the Flink REST facts. An undeclared fork
#   doubles or reorders data. A restore that gives the pipeline a new job id (A A B B) does not
#   interleave and passes.
# custom:
#   id: SW-TABLE-010
#   severity: error
#   remediation: |
#     Stop the undeclared job, or declare it under backfills (job, job_id, branch, from/to,
#     reason) so reviewers and the evidence record know about it; a job with a contract of its
#     own declares itself a backfill or fork of this pipeline there (fork_of, SW-TABLE-014).
#   example: |
#     backfills: []   # job f0f0... committed snapshot 103 between snapshots 102 and 104 of job a1b2...
deny contains f if {
	some pair in _ice_lineage.interleavings
	not _ice_declared(pair)
	f := lib.finding(
		"SW-TABLE-010",
		"backfills",
		sprintf(
			"jobs %v and %v both commit to %s on branch %s (interleaved: %s) and no backfill declares either: an undeclared fork, two jobs writing at the same time (a restore hands over from one job id to the next without interleaving)",
			[pair.job_ids[0], pair.job_ids[1], _ice_name, _ice.branch, _ice_pattern_text(pair.pattern)],
		),
		{"job_ids": pair.job_ids, "pattern": pair.pattern, "snapshot_counts": object.get(pair, "snapshot_counts", null)},
		{"source": "iceberg", "value": concat("/", sort(pair.job_ids))},
	)
}

_ice_pattern_text(pattern) := concat(" then ", [sprintf("snapshot %v by job %v (checkpoint %v)", [p.snapshot_id, p.job_id, p.checkpoint_id]) | some p in pattern])

# METADATA
# title: A data file must not be added twice
# description: |
#   Fires when the same data file path was added by two snapshots of the checked branch, or
#   appears in two manifest entries added by one snapshot: its rows are read twice. Read from the
#   manifests of the newest snapshots in the window (capped, see docs/facts-iceberg.md); silent
#   when the manifests were not read.
# custom:
#   id: SW-TABLE-011
#   severity: error
#   remediation: |
#     Remove the duplicate entry (roll back past the second add, or rewrite the file's rows out
#     with a delete), and find the writer that re-committed it (SW-TABLE-008 often names it).
#   example: |
#     # data/00000-0-....parquet added by snapshots 101 and 102
deny contains f if {
	some d in object.get(object.get(_ice, "files", {}), "duplicates", [])
	f := lib.finding(
		"SW-TABLE-011",
		"table.identifier",
		sprintf(
			"data file %s is in %v manifest entries of %s on branch %s, added by snapshot(s) %s: its rows are read twice",
			[d.path, d.entries, _ice_name, _ice.branch, _ice_ids(d.snapshot_ids)],
		),
		{"path": d.path, "snapshot_ids": d.snapshot_ids, "entries": d.entries, "kind": d.kind},
		{"source": "iceberg", "value": d.path},
	)
}

# METADATA
# title: Snapshots without Flink lineage must be maintenance
# description: |
#   Fires for snapshots in the window of the checked branch that carry no flink.job-id and are
#   not maintenance (operation replace): a writer other than the Flink job (a batch job, a manual
#   fix, a DELETE). One finding per operation and writer engine (summary engine-name when set),
#   naming the snapshot ids.
# custom:
#   id: SW-TABLE-012
#   severity: warning
#   remediation: |
#     Route other writers through a declared backfill (on a branch), or make them stamp their
#     commits; for a one-off fix, waive with the reason.
#   example: |
#     # snapshot 4711 (operation overwrite, no flink.* keys) between the job's commits
warn contains f if {
	some g in _ice_lineage.out_of_band
	f := lib.finding(
		"SW-TABLE-012",
		"table.identifier",
		sprintf(
			"%v %s snapshot(s) on branch %s of %s carry no Flink lineage (writer %v): snapshots %s",
			[g.count, g.operation, _ice.branch, _ice_name, lib.quote(g.writer), _ice_ids(g.snapshot_ids)],
		),
		{"operation": g.operation, "writer": g.writer, "count": g.count, "snapshot_ids": g.snapshot_ids},
		{"source": "iceberg", "value": sprintf("%v/%v", [g.operation, g.writer])},
	)
}
