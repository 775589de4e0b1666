# State contract (SW-STATE): the savepoint side, read from facts.savepoint (the savepoint or
# retained checkpoint to restore: `gate` and `evidence`). facts.savepoint.operators[] carry the
# operator id, the uid/name recorded in the metadata (v5+), parallelism, max parallelism, whether
# the operator holds state as Flink defines it, and the declared uid that hashes to its id
# ("matched") or, when none does, the closest declared uid ("closest", "candidates").
package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.savepoint]

_sp := lib.gathered(input.facts.savepoint)

# Flink refuses a restore with unclaimed state unless allowNonRestoredState (default false).
_sp_skips_unclaimed if object.get(input.contract, ["state", "allow_non_restored_state"], false) == true

_sp_what := sprintf("%s %s (checkpoint %v)", [object.get(_sp, "kind", "savepoint"), _sp.location, _sp.checkpoint_id]) if {
	is_string(object.get(_sp, "kind", null))
} else := sprintf("savepoint %s (checkpoint %v)", [_sp.location, _sp.checkpoint_id])

_sp_recorded(op) := sprintf(" (uid %s)", [lib.quote(op.uid)]) if {
	is_string(op.uid)
} else := sprintf(" (name %s)", [lib.quote(op.name)]) if {
	is_string(op.name)
} else := ""

_sp_closest(op) := sprintf("; closest declared uid: %s at %s (edit distance %v)", [lib.quote(op.closest.uid), op.closest.path, op.closest.distance]) if {
	is_number(op.closest.distance)
} else := sprintf("; declared uids with no state in the savepoint: %s", [concat(", ", [sprintf("%s at %s", [lib.quote(c.uid), c.path]) | some c in op.candidates])]) if {
	count(object.get(op, "candidates", [])) > 0
} else := "; no declared uid is a candidate: declare this operator's uid (or its restores_from)"

_sp_path(op) := op.closest.path if {
	is_string(op.closest.path)
} else := "state.operators"

# An operator a connector pins to max parallelism 1 (the Iceberg committer, setMaxParallelism(1))
# holds no keyed state: Flink compares it with its own pinned value, not the job's.
_sp_pinned_singleton(op) if {
	op.max_parallelism == 1
	op.keyed == false
}
