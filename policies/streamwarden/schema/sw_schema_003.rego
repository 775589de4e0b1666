package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# ---------------------------------------------------------------- SW-SCHEMA-003

# METADATA
# title: Optional fields must not become required
# description: |
#   Existing data files may hold nulls in an optional column, so Iceberg refuses to make it
#   required. Fires for each field paired between base and head that is optional in the base
#   (required false or absent) and required in head, under every compatibility mode.
# custom:
#   id: SW-SCHEMA-003
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the field optional and enforce non-null values where the data is written or read
#     (quality.not_null reports nulls in the live rows), or add a new required column with a
#     default.
#   example: |
#     # base: {name: currency, type: string}
#     table:
#       schema: [{name: currency, type: string, required: true}]
deny contains f if {
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	not _evo_required(o)
	_evo_required(h)
	name := _evo_name(h)
	f := {
		"rule": "SW-SCHEMA-003",
		"message": sprintf(
			"field %s was optional in %s and is required now: existing data may hold nulls and Iceberg refuses the change; keep it optional",
			[lib.quote(name), _evo_base_name],
		),
		"path": sprintf("table.schema[%d].required", [p.head]),
		"evidence": {
			"field": name,
			"base_required": object.get(o, "required", null),
			"head_required": true,
			"compatibility": _evo_mode,
		},
	}
}
