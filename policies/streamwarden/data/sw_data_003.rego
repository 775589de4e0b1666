package streamwarden.data

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

# METADATA
# title: Not-null columns must hold no nulls
# description: |
#   Columns listed in quality.not_null, and fields declared required in table.schema, must have no
#   null value among the table's live rows. One finding per column with nulls, with the count;
#   also fires when a quality.not_null column is missing from the live table (a required field
#   that is missing is SW-TABLE-001's).
# custom:
#   id: SW-DATA-003
#   severity: error
#   remediation: |
#     Find the writer of the nulls (a source field that went missing, a join that no longer
#     matches); fix or delete the rows, and make the column required in the table where it can be.
#   example: |
#     quality: {not_null: [customer_id]}   # 12 live rows have customer_id null
deny contains f if {
	some col, info in _data.not_null
	is_number(info.nulls)
	info.nulls > 0
	f := lib.finding(
		"SW-DATA-003",
		_null_path(col),
		sprintf(
			"column %s of %s holds %v null(s) among its live rows, but it is declared %s",
			[col, _table_name, info.nulls, _declared_text(info)],
		),
		object.union(_scan_evidence, {"column": col, "nulls": info.nulls, "declared_in": info.declared_in}),
		{"source": "data", "value": col},
	)
}

# SW-DATA-003: a quality.not_null column the table does not have
deny contains f if {
	some col, info in _data.not_null
	info.missing == true
	"quality.not_null" in info.declared_in
	f := lib.finding(
		"SW-DATA-003",
		_null_path(col),
		sprintf(
			"quality.not_null names %s, which the live table schema of %s does not have: it cannot be proven non-null",
			[col, _table_name],
		),
		object.union(_scan_evidence, {"column": col, "missing": true}),
		{"source": "data", "value": col},
	)
}
