package streamwarden.data

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

# METADATA
# title: Unique keys must be unique among live rows
# description: |
#   The values of the quality.unique columns, taken together, must not repeat among the table's
#   live rows: rows removed by position or equality delete files do not count, as for any reader.
#   Keys with a null part are not compared (nulls are SW-DATA-003's). Fires when a key occurs
#   more than once (with up to ten sample keys), and when a quality.unique column is missing from
#   the live table. An incremental scan checks the new rows' keys against the whole table.
# custom:
#   id: SW-DATA-002
#   severity: error
#   remediation: |
#     Find the writer of the duplicates (a replayed checkpoint, SW-TABLE-008/009; an append-only sink
#     where upserts were needed, write.upsert.enabled with identifier fields); remove them with a
#     delete, and make the sink idempotent.
#   example: |
#     quality: {unique: [order_id]}   # order_id 42 is live twice
deny contains f if {
	keys := _quality.unique
	fact := _data.unique
	fact.columns == keys
	fact.duplicate_keys > 0
	f := lib.finding(
		"SW-DATA-002",
		"quality.unique",
		sprintf(
			"%v value(s) of (%s) occur more than once among the live rows of %s (%v surplus rows)%s",
			[fact.duplicate_keys, concat(", ", keys), _table_name, fact.duplicate_rows, _values_text(fact)],
		),
		object.union(_scan_evidence, {
			"columns": keys, "duplicate_keys": fact.duplicate_keys,
			"duplicate_rows": fact.duplicate_rows, "samples": fact.samples,
		}),
		{"source": "data"},
	)
}

# SW-DATA-002: key columns the table does not have
deny contains f if {
	keys := _quality.unique
	fact := _data.unique
	fact.columns == keys
	count(fact.missing) > 0
	f := lib.finding(
		"SW-DATA-002",
		"quality.unique",
		sprintf(
			"quality.unique names %s, which the live table schema of %s does not have: uniqueness cannot be proven",
			[concat(", ", fact.missing), _table_name],
		),
		object.union(_scan_evidence, {"columns": keys, "missing": fact.missing}),
		{"source": "data"},
	)
}
