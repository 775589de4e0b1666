# Table contract (SW-TABLE): helpers of commit lineage and freshness on the live table
# (facts.iceberg.snapshots, facts.iceberg.lineage, facts.iceberg.files; docs/facts-iceberg.md).
# Those findings have "source": "iceberg"; helpers _ice and _ice_name live in iceberg.rego.
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

_ice_state_note := sprintf(" (the Flink job is %s)", [_ice_flink_state]) if is_string(_ice_flink_state) else := ""

# ---------------------------------------------------------------------------------------- lineage

_ice_lineage := object.get(_ice, "lineage", {})

_ice_ids(ids) := concat(", ", [sprintf("%v", [x]) | some x in ids])

# which job wrote the snapshots, or that they do not say
_t007_job(job_id) := sprintf("job %s", [lib.quote(job_id)]) if {
	is_string(job_id)
} else := "no job known: they carry no flink.job-id"

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

_ice_pattern_text(pattern) := concat(" then ", [sprintf("snapshot %v by job %v (checkpoint %v)", [p.snapshot_id, p.job_id, p.checkpoint_id]) | some p in pattern])
