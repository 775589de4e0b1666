# State contract (SW-STATE): the diff side, the base branch's contract (input.base.contract)
# against the pull request's (input.contract). The contract-only rules are in state.rego.
#
# Every rule here is silent unless input.base is an object whose status is "present" (or
# absent) and whose contract is an object: no --base, a contract added by the pull request
# (status "added") and an unparseable base say nothing here.
package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

_diff_head := c if {
	c := object.get(input, "contract", null)
	is_object(c)
}

_diff_list(c, path) := xs if {
	xs := object.get(c, path, [])
	is_array(xs)
} else := []

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
	some x in _diff_list(_diff_head, section.path)
	u := _diff_uid(x)
}

_diff_head_claims contains u if {
	some op in _diff_list(_diff_head, ["state", "operators"])
	is_object(op)
	u := object.get(op, "restores_from", null)
	is_string(u)
}

_diff_head_dropped contains u if {
	some d in _diff_list(_diff_head, ["state", "dropped"])
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

# METADATA
# title: State must not be orphaned by a removed uid
# description: |
#   Flink restores state by operator uid. When a uid that held state at the base is gone, a
#   savepoint taken by the running job has state no operator claims, and Flink refuses the
#   restore (unless told to drop it). Fires for each uid declared at the base
#   (state.operators[].uid, job.sources[].uid, job.sinks[].uid) that head declares in none of
#   those places and that no head operator names in restores_from, unless head lists it in
#   state.dropped and sets state.allow_non_restored_state to true. A uid that only moved
#   between sections (say from state.operators to job.sinks) is still declared. A base
#   operator's restores_from is not a uid of its own: its state was saved under the
#   operator's uid. The finding points at the base section's list in head, with the uid as
#   value.
# custom:
#   id: SW-STATE-006
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the uid, or give the operator that takes over the state restores_from: <old uid>
#     (and setUidHash in the job). If the state may go, list the uid in state.dropped with a
#     reason and set state.allow_non_restored_state: true for that deploy.
#   example: |
#     # base: state.operators: [{uid: orders-dedup, kind: keyed, ...}]
#     state:
#       operators: [{uid: orders-dedup-v2, kind: keyed, ...}]   # no restores_from: orders-dedup
deny contains f if {
	lib.diff_base(input)
	some section in _diff_uid_sections
	some x in _diff_list(lib.diff_base(input), section.path)
	u := _diff_uid(x)
	not u in _diff_head_claims
	not _diff_released(u)
	f := {
		"rule": "SW-STATE-006",
		"message": sprintf(
			"uid %s (%s in %s) is gone and no operator declares restores_from: %s: its state in the last savepoint would be unclaimed and the restore refused; %s",
			[lib.quote(u), section.name, lib.diff_base_name(input), u, _diff_drop_hint(u)],
		),
		"path": section.name,
		"value": u,
		"evidence": {
			"uid": u,
			"base_section": section.name,
			"listed_in_dropped": u in _diff_head_dropped,
			"allow_non_restored_state": object.get(_diff_head, ["state", "allow_non_restored_state"], null),
		},
	}
}

# METADATA
# title: Max parallelism must not change
# description: |
#   The max parallelism fixes the number of key groups the keyed state is split into; a
#   savepoint taken with one value cannot be restored with another ("Max parallelism mismatch
#   between checkpoint/savepoint state and new program"). Fires when job.max_parallelism
#   differs between the base and head contracts, including when it is set on one side only:
#   set where the base had none, a restore breaks unless the value is the one Flink derived
#   when the job first started without state (the savepoints carry it); unset where the base
#   pinned one, a restore keeps the savepoint's value, but the pin is gone (SW-STATE-004).
# custom:
#   id: SW-STATE-007
#   kind: diff
#   severity: error
#   remediation: |
#     Keep job.max_parallelism (and pipeline.max-parallelism) at the base value. Changing it
#     needs a state migration (State Processor API) or a fresh start without state.
#   example: |
#     # base: job: {max_parallelism: 128}
#     job: {max_parallelism: 256}
deny contains f if {
	lib.diff_base(input)
	old := object.get(lib.diff_base(input), ["job", "max_parallelism"], null)
	new := object.get(_diff_head, ["job", "max_parallelism"], null)
	old != new
	f := {
		"rule": "SW-STATE-007",
		"message": sprintf(
			"job.max_parallelism changes from %s in %s to %s: %s; keep %s",
			[_diff_max_par_text(old), lib.diff_base_name(input), _diff_max_par_text(new), _diff_max_par_why(old, new), _diff_max_par_text(old)],
		),
		"path": "job.max_parallelism",
		"value": new,
		"evidence": {"base": old, "head": new},
	}
}

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
	ops := _diff_list(lib.diff_base(input), ["state", "operators"])
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
	some idx, op in _diff_list(_diff_head, ["state", "operators"])
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

# METADATA
# title: Operator state must stay restorable
# description: |
#   A savepoint is read with the serializer and key the state was written with. Key schema
#   evolution is unsupported in Flink, and switching serializers (say pojo to avro or kryo)
#   makes the old state unreadable; a change of state kind (keyed, operator, broadcast) is a
#   change of the state's type that needs a migration. For each head operator that continues
#   a base operator (same uid, or restores_from naming the base uid), fires once per change:
#   serializer changed, key changed (order counts), or kind changed while schema_version was
#   not bumped (head's is not greater than base's; declaring one where the base had none
#   counts as a bump). Only values declared on both sides are compared.
# custom:
#   id: SW-STATE-008
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the serializer and the key. To change them, give the operator a new uid, migrate
#     the state with the State Processor API (or drop it through state.dropped and
#     allow_non_restored_state), and declare the result. For a state type change, migrate
#     the state and bump schema_version.
#   example: |
#     # base: {uid: orders-dedup, kind: keyed, key: [order_id], serializer: avro, schema_version: 3}
#     state:
#       operators: [{uid: orders-dedup, kind: keyed, key: [order_id, customer_id], serializer: kryo, schema_version: 3}]
deny contains f if {
	some [idx, op, bo] in _diff_op_pairs
	[old, new] := _diff_changed(op, bo, "serializer")
	f := {
		"rule": "SW-STATE-008",
		"message": sprintf(
			"operator %s switches its state serializer from %v to %v: the state in the last savepoint cannot be read with the new serializer; keep %v or migrate the state under a new uid",
			[lib.quote(_diff_uid(op)), old, new, old],
		),
		"path": sprintf("state.operators[%d].serializer", [idx]),
		"evidence": _diff_op_evidence(op, bo, "serializer", old, new),
	}
}

# SW-STATE-008: key changed
deny contains f if {
	some [idx, op, bo] in _diff_op_pairs
	[old, new] := _diff_changed(op, bo, "key")
	f := {
		"rule": "SW-STATE-008",
		"message": sprintf(
			"operator %s changes its state key from %v to %v: Flink does not support key schema evolution, so the keyed state in the last savepoint cannot be restored; keep the key or migrate the state under a new uid",
			[lib.quote(_diff_uid(op)), old, new],
		),
		"path": sprintf("state.operators[%d].key", [idx]),
		"evidence": _diff_op_evidence(op, bo, "key", old, new),
	}
}

# SW-STATE-008: state kind changed without a schema_version bump
deny contains f if {
	some [idx, op, bo] in _diff_op_pairs
	[old, new] := _diff_changed(op, bo, "kind")
	not _diff_bumped(op, bo)
	f := {
		"rule": "SW-STATE-008",
		"message": sprintf(
			"operator %s changes its state kind from %v to %v but keeps schema_version %v: the state type changed without a migration; migrate the state and bump schema_version",
			[lib.quote(_diff_uid(op)), old, new, object.get(op, "schema_version", null)],
		),
		"path": sprintf("state.operators[%d].kind", [idx]),
		"evidence": object.union(
			_diff_op_evidence(op, bo, "kind", old, new),
			{"base_schema_version": object.get(bo, "schema_version", null), "schema_version": object.get(op, "schema_version", null)},
		),
	}
}

_diff_op_evidence(op, bo, key, old, new) := {
	"uid": object.get(op, "uid", null),
	"base_uid": object.get(bo, "uid", null),
	"field": key,
	"base": old,
	"head": new,
}
