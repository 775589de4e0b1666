package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Forward compatibility forbids widening a column
# description: |
#   Under forward or full (and their transitive forms) readers still on the old schema read
#   data written with the new one; a reader that expects an int cannot read a long, even
#   though Iceberg itself accepts the promotion. Fires for each head field whose type is an
#   allowed promotion of its base type (see SW-SCHEMA-002) while the base's compatibility is
#   forward, full, forward_transitive or full_transitive. Under the transitive forms every
#   earlier version counts too: a field whose type in any earlier version differs from head
#   fires (a difference against an earlier version is reported here whether or not it is a
#   promotion, since SW-SCHEMA-002 compares base and head only). A base -> head change that
#   is not a promotion is SW-SCHEMA-002 alone. Under backward and none promotions are safe.
#   One finding per head field.
# custom:
#   id: SW-SCHEMA-010
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the old type while old readers exist (add a new, wider column beside it), or
#     upgrade every reader first and change the compatibility mode in a reviewed change.
#   example: |
#     # base: {name: quantity, type: int}; schema_evolution: {compatibility: forward}
#     table:
#       schema: [{name: quantity, type: long}]
deny contains f if {
	_evo_active
	_evo_mode in _evo_forward_modes
	some hi in _evo_widened_heads
	not hi in _evo_refused_types
	seen := _evo_widened_from(hi)
	[label, commit, old0] := seen[0]
	h := _evo_head_fields[hi]
	name := _evo_name(h)
	f := {
		"rule": "SW-SCHEMA-010",
		"message": sprintf(
			"field %s is %v in %s and %v now, while schema_evolution.compatibility is %s: readers still on the old schema cannot read the wider type; keep %v or add a new column",
			[lib.quote(name), old0, label, _evo_type(h), _evo_mode, old0],
		),
		"path": sprintf("table.schema[%d].type", [hi]),
		"evidence": {
			"field": name,
			"old_type": old0,
			"head_type": _evo_type(h),
			"version": label,
			"commit": commit,
			"versions_differing": count(seen),
			"compatibility": _evo_mode,
		},
	}
}
