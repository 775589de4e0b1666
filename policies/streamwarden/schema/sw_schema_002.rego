package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# ---------------------------------------------------------------- SW-SCHEMA-002

# METADATA
# title: Column types may only change by an Iceberg promotion
# description: |
#   Iceberg changes a column's type in place only by a promotion: int to long, float to
#   double, decimal(P,S) to decimal(P',S) with P' > P (same scale; a scale change is not a
#   promotion; P' at most 38), and, on format version 3 (the head's table.format_version), unknown
#   to any type and date to timestamp
#   or timestamp_ns (not to the tz types). Anything else (long to int, string to binary,
#   decimal scale changes, any change inside a struct, list or map type) is refused: the table
#   cannot evolve that way without a rewrite. Fires for each field paired between base and
#   head (by id, renamed_from or name) whose type changed other than by a promotion, under
#   every compatibility mode, none included. A non-promotion is reported here alone, never as
#   SW-SCHEMA-010 too.
# custom:
#   id: SW-SCHEMA-002
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the old type, or add a new column with the new type (and backfill it) instead of
#     changing this one. Nested types must stay exactly as they are.
#   example: |
#     # base: {name: amount, type: "decimal(12,2)"}
#     table:
#       schema: [{name: amount, type: "decimal(12,4)"}]   # scale change
deny contains f if {
	some [hi, bi, old, new] in _evo_type_changes
	not _evo_promotion(old, new)
	name := _evo_name(_evo_head_fields[hi])
	f := {
		"rule": "SW-SCHEMA-002",
		"message": sprintf(
			"field %s changed type from %v to %v, which is not an Iceberg promotion%s: Iceberg refuses it without a table rewrite; keep %v or add a new column",
			[lib.quote(name), old, new, _evo_promotion_note(old, new), old],
		),
		"path": sprintf("table.schema[%d].type", [hi]),
		"evidence": {
			"field": name,
			"base_type": old,
			"head_type": new,
			"base_index": bi,
			"format_version": _evo_format_version,
			"compatibility": _evo_mode,
		},
	}
}
