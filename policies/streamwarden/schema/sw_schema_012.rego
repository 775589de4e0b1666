package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Columns consumers read must not be removed or made optional
# description: |
#   A table with declared consumers (the base's metadata.consumers) promises them its columns:
#   a dashboard or a downstream job that selects a column breaks when it is gone, and one that
#   relies on a required column (a join key, a NOT NULL column of its own) breaks on the first
#   null. While the base's schema_evolution.protect_consumers is true (the default, also when the
#   section is absent), fires under every compatibility mode, none included, for each base
#   column that has no pair in head (paired by id, renamed_from or name: a rename is
#   SW-SCHEMA-005's, a removal plus an addition when it has neither) and for each column that
#   is required in the base and optional in head. A removal that SW-SCHEMA-001 reports (a
#   required field under forward, full or their transitive forms) is not reported twice.
#   Narrowing a column's type (long to int, a smaller decimal precision, another fixed length)
#   is SW-SCHEMA-002 under every mode, and making it required is SW-SCHEMA-003. The consumers
#   and the setting in force are the base's: a pull request that also drops the consumers or
#   turns protection off is still judged with them.
# custom:
#   id: SW-SCHEMA-012
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the column (add a new one beside it if the data changes). To retire it, tell the
#     consumers and record their agreement as a waiver of this finding on the base branch
#     (approved_by, expires) before the pull request that removes it; or, for a table whose
#     consumers do not depend on its columns, set schema_evolution.protect_consumers to false
#     in a pull request of its own (SW-SCHEMA-009 asks for its review).
#   example: |
#     # base: metadata.consumers: [{name: finance-dashboard, ...}], no schema_evolution section
#     table:
#       schema: [{name: order_id, type: long, required: true}]   # amount removed
deny contains f if {
	_evo_active
	_evo_protects
	some bi in _evo_unpaired_bases
	o := _evo_base_fields[bi]
	name := _evo_name(o)
	not _evo_001_reports(name)
	f := {
		"rule": "SW-SCHEMA-012",
		"message": sprintf(
			"column %s was removed, but the table's consumers (%s) read it and schema_evolution.protect_consumers is in force in %s (compatibility %s): their queries break whatever the compatibility mode; keep the column, or tell them and record their agreement as a waiver on the base branch first",
			[lib.quote(name), concat(", ", _evo_consumers), _evo_base_name, _evo_mode],
		),
		"path": "table.schema",
		"value": name,
		"evidence": _evo_protect_evidence(name),
	}
}

# SW-SCHEMA-012: a required column made optional
deny contains f if {
	_evo_protects
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	_evo_required(o)
	not _evo_required(h)
	name := _evo_name(h)
	f := {
		"rule": "SW-SCHEMA-012",
		"message": sprintf(
			"column %s is required in %s and optional now, but the table's consumers (%s) read it and schema_evolution.protect_consumers is in force: a consumer that relies on it never being null (a join key, a NOT NULL column of its own) breaks on the first null; keep it required",
			[lib.quote(name), _evo_base_name, concat(", ", _evo_consumers)],
		),
		"path": sprintf("table.schema[%d].required", [p.head]),
		"value": name,
		"evidence": object.union(_evo_protect_evidence(name), {"base_required": true, "head_required": object.get(h, "required", null)}),
	}
}
