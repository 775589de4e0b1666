# Recovery and governance (SW-REC): helpers of the contract side, shared by the rule files of this
# package (one per rule id, sw_rec_NNN.rego, each holding every body of its id and its METADATA).
package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

_metadata := object.get(input.contract, "metadata", {})

# A backfill is bounded by a branch, or by both ends of a time range (SW-REC-004).
_bounded(b) if not lib.blank(object.get(b, "branch", null))

_bounded(b) if {
	not lib.blank(object.get(b, "from", null))
	not lib.blank(object.get(b, "to", null))
}

# The sinks that promise exactly-once delivery (SW-REC-005). The promise is the sink's:
# checkpoint.mode alone promises no delivery, and a sink without `delivery` promises nothing.
_exactly_once_sinks := lib.exactly_once_sink_names(input.contract)

# 'sink "a"' or 'sinks "a" and "b"', for the message.
_sinks_phrase(names) := sprintf("sink %s promises", [lib.quote(names[0])]) if count(names) == 1

_sinks_phrase(names) := sprintf("sinks %s promise", [concat(" and ", [lib.quote(n) | some n in names])]) if count(names) > 1

_that_sink(names) := "the sink" if count(names) == 1

_that_sink(names) := "the sinks" if count(names) > 1

# The oldest savepoint the contract allows restoring, by the field that allows it (SW-REC-006):
# retention.savepoints.max_age (SW-REC-003 lets a savepoint that old through the gate) and
# retention.rollback_window (the job must be restorable that far back).
_restore_windows contains w if {
	v := input.contract.retention.savepoints.max_age
	is_number(v)
	w := {"path": "retention.savepoints.max_age", "ms": v}
}

_restore_windows contains w if {
	v := input.contract.retention.rollback_window
	is_number(v)
	w := {"path": "retention.rollback_window", "ms": v}
}

# A computed limit for a message: an age, or "nothing" when the margin eats the whole retention.
_age_or_none(ms) := lib.fmt_age(ms) if ms >= 1000 else := "nothing"
