package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# ---------------------------------------------------------------- SW-SCHEMA-005

# METADATA
# title: Renames need allow_renames
# description: |
#   Consumers that read by name (SQL, Spark DataFrames, dashboards) see a rename as a dropped
#   column and a new one. Fires for each field paired between base and head by id (same id,
#   new name) or by renamed_from whose name changed while the base contract's
#   schema_evolution.allow_renames is false or absent. allow_renames is an explicit promise,
#   so this fires under every compatibility mode, none included; turning allow_renames on in
#   the same pull request does not count (the base's section is in force, and SW-SCHEMA-009
#   reports the change).
# custom:
#   id: SW-SCHEMA-005
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the old name (add the new column beside it if needed), or first set
#     schema_evolution.allow_renames to true in a reviewed change and tell the consumers.
#   example: |
#     # base: {name: amount, type: "decimal(12,2)", id: 3}; schema_evolution.allow_renames: false
#     table:
#       schema: [{name: gross_amount, type: "decimal(12,2)", id: 3}]
deny contains f if {
	not _evo_allow_renames
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	old := _evo_name(o)
	new := _evo_name(h)
	old != new
	by := _evo_paired_by(h, o)
	f := {
		"rule": "SW-SCHEMA-005",
		"message": sprintf(
			"field %s was renamed to %s (paired by %s) while schema_evolution.allow_renames is not true in %s: consumers that read by name lose the column; keep the old name or allow renames in a separate reviewed change",
			[lib.quote(old), lib.quote(new), by, _evo_base_name],
		),
		"path": sprintf("table.schema[%d].name", [p.head]),
		"evidence": {
			"base_name": old,
			"head_name": new,
			"paired_by": by,
			"allow_renames": object.get(_evo_base_section, "allow_renames", null),
			"compatibility": _evo_mode,
		},
	}
}
