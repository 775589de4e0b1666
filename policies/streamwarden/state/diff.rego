# State contract (SW-STATE): helpers of the diff side, the base branch's contract
# (input.base.contract) against the pull request's (input.contract).
#
# Every rule on them is silent unless input.base is an object whose status is "present" (or
# absent) and whose contract is an object: no --base, a contract added by the pull request
# (status "added") and an unparseable base say nothing.
package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

_diff_head := lib.diff_head(input.contract)

_diff_uid(x) := u if {
	is_object(x)
	u := object.get(x, "uid", null)
	is_string(u)
	not lib.blank(u)
}

# Where uids live: the operators' state, the sources' offsets and split enumerators, the sinks'
# committers.
_diff_uid_sections := [
	{"path": ["state", "operators"], "name": "state.operators"},
	{"path": ["job", "sources"], "name": "job.sources"},
	{"path": ["job", "sinks"], "name": "job.sinks"},
]

# Every uid head declares, and every uid a head operator restores from.
_diff_head_claims contains u if {
	some section in _diff_uid_sections
	some x in lib.list_at(_diff_head, section.path)
	u := _diff_uid(x)
}

_diff_head_claims contains u if {
	some op in lib.list_at(_diff_head, ["state", "operators"])
	is_object(op)
	u := object.get(op, "restores_from", null)
	is_string(u)
}

_diff_head_dropped contains u if {
	some d in lib.list_at(_diff_head, ["state", "dropped"])
	u := _diff_uid(d)
}

_diff_allow_non_restored if object.get(_diff_head, ["state", "allow_non_restored_state"], false) == true

# A base uid head lets go of on purpose: listed in state.dropped with allow_non_restored_state.
_diff_released(u) if {
	u in _diff_head_dropped
	_diff_allow_non_restored
}

_diff_drop_hint(u) := "it is listed in state.dropped, but state.allow_non_restored_state is not true, so Flink refuses the restore" if {
	u in _diff_head_dropped
} else := "declare restores_from on the operator that takes over its state, or list it in state.dropped with allow_non_restored_state: true if the state may go"

# What the change does to a restore of the running job's savepoints (see SW-STATE-004).
_diff_max_par_why(old, new) := sprintf("the running job's savepoints carry the max parallelism Flink derived when it first started without state (128 if that was at a parallelism up to 85), and a restore with %v set breaks unless it is that value", [new]) if {
	old == null
} else := "a restore keeps the savepoint's value, but nothing pins it any more: a start without state derives one from the parallelism, and a later set value other than the savepoint's breaks the restore" if {
	new == null
} else := "Flink refuses to restore a savepoint taken with one set max parallelism into a job set to another: every savepoint of the running job becomes unrestorable"

_diff_max_par_text(x) := "unset" if {
	x == null
} else := sprintf("%v", [x])

# Base operators by uid (first occurrence wins).
_diff_base_ops := {u: ops[i] |
	ops := lib.list_at(lib.diff_base(input), ["state", "operators"])
	some u, i in lib.first_index([[k, j] | some j, op in ops; k := _diff_uid(op)])
}

# The base operator a head operator continues: same uid, else its restores_from.
_diff_base_op(op) := bo if {
	bo := _diff_base_ops[_diff_uid(op)]
} else := bo if {
	bo := _diff_base_ops[object.get(op, "restores_from", null)]
}

# [head index, head operator, base operator] of every operator head continues.
_diff_op_pairs contains [idx, op, bo] if {
	lib.diff_base(input)
	some idx, op in lib.list_at(_diff_head, ["state", "operators"])
	is_object(op)
	bo := _diff_base_op(op)
}

_diff_bumped(op, bo) if {
	new := object.get(op, "schema_version", null)
	is_number(new)
	old := object.get(bo, "schema_version", null)
	not is_number(old)
}

_diff_bumped(op, bo) if {
	new := object.get(op, "schema_version", null)
	old := object.get(bo, "schema_version", null)
	is_number(new)
	is_number(old)
	new > old
}

# A declared value on both sides that differs (an absent declaration is no change).
_diff_changed(op, bo, key) := [old, new] if {
	old := object.get(bo, key, null)
	new := object.get(op, key, null)
	old != null
	new != null
	old != new
}

_diff_op_evidence(op, bo, key, old, new) := {
	"uid": object.get(op, "uid", null),
	"base_uid": object.get(bo, "uid", null),
	"field": key,
	"base": old,
	"head": new,
}
