package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Table schema changes must bump the state that carries them
# description: |
#   An operator whose state holds rows of the table's schema (carries_table_schema: true)
#   restores those rows with the old layout after a schema change unless its state schema is
#   migrated; the contract records that migration as a schema_version bump. When the base
#   contract's schema_evolution.coordinate_with_state is true (absent means false) and the
#   table schema changed between base and head (a field added, removed, renamed, or its type
#   or required-ness changed; doc, default and order edits do not count), fires for each head
#   operator with carries_table_schema true whose schema_version equals the one of its base
#   operator (matched by uid, or by restores_from naming the base uid; both absent counts as
#   equal). A new operator has nothing to migrate.
# custom:
#   id: SW-SCHEMA-007
#   kind: diff
#   severity: error
#   remediation: |
#     Migrate the operator's state to the new table schema and bump its schema_version in the
#     same pull request (or, if the state really does not hold table rows, set
#     carries_table_schema to false).
#   example: |
#     # base: table.schema [..., {name: channel, type: string}] added here; operator schema_version 1
#     schema_evolution: {coordinate_with_state: true}
#     state:
#       operators: [{uid: orders-enrich-join, kind: keyed, carries_table_schema: true, schema_version: 1}]
deny contains f if {
	_evo_coordinate
	count(_evo_schema_changes) > 0
	some idx, op in _evo_ops(_evo_head)
	is_object(op)
	object.get(op, "carries_table_schema", false) == true
	bo := _evo_base_op(op)
	version := object.get(op, "schema_version", null)
	version == object.get(bo, "schema_version", null)
	changes := sort([c | some c in _evo_schema_changes])
	f := {
		"rule": "SW-SCHEMA-007",
		"message": sprintf(
			"operator %s carries the table schema, and the table schema changed (%s), but its schema_version stayed %v: its state would restore rows of the old schema; migrate the state and bump schema_version",
			[lib.quote(object.get(op, "uid", null)), concat(", ", _evo_first(changes, 5)), version],
		),
		"path": sprintf("state.operators[%d].schema_version", [idx]),
		"evidence": {
			"uid": object.get(op, "uid", null),
			"base_uid": object.get(bo, "uid", null),
			"schema_version": version,
			"table_changes": changes,
		},
	}
}
