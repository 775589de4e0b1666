package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Kryo state cannot evolve
# description: |
#   State serialized with Kryo has no schema evolution: any change to the state's classes
#   makes the savepoint unreadable. Fires for each state.operators[] entry with serializer kryo
#   while schema_evolution.compatibility is not none (the contract promises the schema can
#   evolve; an absent compatibility means backward).
# custom:
#   id: SW-STATE-005
#   severity: warning
#   remediation: |
#     Use an evolvable serializer (avro, pojo or rowdata) for the operator's state, or set
#     schema_evolution.compatibility to none if the schema will never change.
#   example: |
#     state: {operators: [{uid: enrich, kind: keyed, serializer: kryo, ttl: 2h}]}
#     schema_evolution: {compatibility: backward}
warn contains f if {
	compatibility := _compatibility
	compatibility != "none"
	some idx, op in _state_operators
	op.serializer == "kryo"
	f := {
		"rule": "SW-STATE-005",
		"message": sprintf(
			"operator %s (state.operators[%d]) uses the kryo serializer while schema_evolution.compatibility is %s: kryo state cannot evolve; use avro, pojo or rowdata",
			[lib.quote(object.get(op, "uid", null)), idx, compatibility],
		),
		"path": sprintf("state.operators[%d].serializer", [idx]),
		"evidence": {"uid": object.get(op, "uid", null), "serializer": "kryo", "compatibility": compatibility},
	}
}
