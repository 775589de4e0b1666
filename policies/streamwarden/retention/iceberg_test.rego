package streamwarden.retention

import rego.v1

import data.streamwarden.table

_day := 86400000

# Bind the fixture to a local before `with input as` (see lib.contract_with in ../lib_test.rego).
_t_ice(patch) := table.ice_input(patch)

_t_rules(findings, id) := [x | some x in findings; x.rule == id]

_t_kept(age, source) := {"retention": {"max_snapshot_age_ms": age, "max_snapshot_age_ms_source": source}}

# ---------------------------------------------------------------- SW-RET-004

# now_ms is 1764000000000; the table keeps 7d, so the limit is 14d
_t_oldest(age) := {"snapshots": {"oldest_unprotected": {"snapshot_id": 5001, "timestamp_ms": 1764000000000 - age}}}

# ---------------------------------------------------------------- helpers of this package's rules

test_source_text_says_where_the_table_keeps_its_retention if {
	_ice_source_text("ref") == "the branch ref"
	_ice_source_text("default") == "Iceberg's default"
	_ice_source_text("property") == "the table property"
}
