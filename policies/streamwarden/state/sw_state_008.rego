package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

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
