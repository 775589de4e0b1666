package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-013

test_table013_property_differs if {
	inp := ice_input({"properties": {"write.upsert.enabled": "false"}})
	findings := warn with input as inp
	[f] := ice_rules(findings, "SW-TABLE-013")
	f.path == `table.properties["write.upsert.enabled"]`
	f.evidence == {"property": "write.upsert.enabled", "contract": "true", "live": "false", "defaulted": false}
}

test_table013_property_absent_live if {
	inp := ice_input2({"table": {"properties": {"write.upsert.enabled": "true", "write.parquet.compression-codec": "zstd"}}}, {})
	findings := warn with input as inp
	[f] := ice_rules(findings, "SW-TABLE-013")
	f.evidence.live == null
	contains(f.message, "is null on the live table")
}

test_table013_booleans_compare_case_insensitively if {
	inp := ice_input({"properties": {"write.upsert.enabled": "TRUE"}})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-TABLE-013")
}

test_table013_default_counts_as_live_value if {
	props := {"write.upsert.enabled": "true", "history.expire.min-snapshots-to-keep": "1"}
	inp := ice_input2({"table": {"properties": props}}, {"properties": {"history.expire.min-snapshots-to-keep": "1"}, "properties_defaulted": ["history.expire.min-snapshots-to-keep"]})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-TABLE-013")
}
