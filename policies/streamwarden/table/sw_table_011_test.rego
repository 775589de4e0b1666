package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-011

test_table011_file_added_twice if {
	dup := {"path": "s3://lake/orders/data/00000-0-x.parquet", "snapshot_ids": [5001, 5002], "entries": 2, "kind": "two_snapshots"}
	inp := ice_input({"files": {"scanned": true, "duplicates": [dup]}})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-011")
	f.value == "s3://lake/orders/data/00000-0-x.parquet"
	f.evidence.snapshot_ids == [5001, 5002]
}

test_table011_silent_when_files_not_read if {
	inp := ice_input({"files": {"scanned": false, "error": "manifest reads were turned off"}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-011")
}
