# Recovery (SW-REC): helpers of the restore side, read from facts.savepoint (the savepoint or
# retained checkpoint to restore) and facts.savepoint.table (the table as of that checkpoint: the
# matching snapshot, the replay window, the sink's idempotence, a named rollback target). Those are
# facts: whether the replay duplicates rows is decided by SW-REC-002 (sw_rec_002.rego), and nowhere
# else. Evaluated in `gate` and `evidence`.
package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.savepoint, mode.gate]

_rg_sp := lib.gathered(input.facts.savepoint)

_rg_plan := t if {
	t := _rg_sp.table
	is_object(t)
}

_rg_idempotent if object.get(_rg_plan, ["idempotence", "idempotent"], false) == true

_rg_rollback_ok if object.get(_rg_plan, ["rollback_target", "valid"], false) == true

_rg_sink_why := sprintf("the sink is not idempotent (write.upsert.enabled=%v, identifier fields %v, from the %s)", [
	object.get(_rg_plan, ["idempotence", "upsert"], false),
	object.get(_rg_plan, ["idempotence", "identifier_fields"], []),
	object.get(_rg_plan, ["idempotence", "source"], "table"),
])

_rg_target := sprintf("roll the table back to snapshot %v (checkpoint %v) first and name it with --rollback-to %v", [m.snapshot_id, m.checkpoint_id, m.snapshot_id]) if {
	m := _rg_plan.matching_snapshot
	is_object(m)
} else := "no snapshot of the savepoint's checkpoint is left to roll back to: restore a newer savepoint"

_rg_named := sprintf("; the named rollback target %s is not usable: %s", [lib.quote(t.named), t.reason]) if {
	t := _rg_plan.rollback_target
	is_object(t)
	t.valid == false
} else := ""

_rg_max_age := input.contract.retention.savepoints.max_age

_rg_stateful if count(object.get(input.contract, ["state", "operators"], [])) > 0

_rg_missing_path := "retention.savepoints.max_age" if {
	is_number(_rg_max_age)
} else := "state.operators"

_rg_kind := k if {
	k := _rg_sp.kind
	is_string(k)
} else := "savepoint"

# The Kafka partitions the savepoint resumes for a job.sources[] entry (facts.savepoint.kafka).
_rg_source_partitions(name) := [p |
	some p in object.get(_rg_sp, ["kafka", "partitions"], [])
	p.source == name
]

# "orders[0] at offset 1234, orders[1] at earliest" for the first five, then how many more.
_rg_offsets_text(parts) := "" if {
	count(parts) == 0
} else := sprintf("; it resumes %s%s", [concat(", ", [_rg_offset_text(p) | some p in array.slice(parts, 0, 5)]), _rg_more(parts)])

_rg_offset_text(p) := sprintf("%s[%v] at offset %v", [p.topic, p.partition, p.offset]) if {
	is_number(p.offset)
} else := sprintf("%s[%v] at %s", [p.topic, p.partition, p.position])

_rg_more(parts) := sprintf(" and %d more partitions", [count(parts) - 5]) if count(parts) > 5 else := ""

# The rewindable sources with a declared retention: [index, source, margin, limit].
_rg_kept_sources contains [idx, source, margin, source.retention - margin] if {
	some idx, source in object.get(input.contract, ["job", "sources"], [])
	source.rewindable == true
	is_number(source.retention)
	margin := lib.source_margin(source)
}
