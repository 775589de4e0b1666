package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: The table's format version must support the contract
# description: |
#   Fires when the live table's format version is below table.format_version, or when upserts
#   are enabled (write.upsert.enabled in the contract or on the table) on a format v1 table:
#   v1 has no delete files, so the Flink upsert sink cannot write equality deletes.
# custom:
#   id: SW-TABLE-003
#   severity: error
#   remediation: |
#     Upgrade the table (ALTER TABLE ... SET TBLPROPERTIES ('format-version'='2')); an upgrade
#     cannot be undone, so coordinate with every reader and writer of the table.
#   example: |
#     table: {format_version: 2}   # the live table is format v1
deny contains f if {
	wanted := _table.format_version
	is_number(wanted)
	_ice.format_version < wanted
	f := lib.finding(
		"SW-TABLE-003",
		"table.format_version",
		sprintf("the live table %s is format v%v, the contract requires v%v", [_ice_name, _ice.format_version, wanted]),
		{"contract": wanted, "live": _ice.format_version},
		{"source": "iceberg"},
	)
}

# SW-TABLE-003: upserts (equality deletes) on a v1 table
deny contains f if {
	_ice.format_version == 1
	_ice_upsert
	not _ice.format_version < object.get(_table, "format_version", 0)
	f := lib.finding(
		"SW-TABLE-003",
		"table.format_version",
		sprintf(
			"upserts are enabled but the live table %s is format v1, which has no delete files: upgrade it to v2",
			[_ice_name],
		),
		{"live": 1, "write.upsert.enabled": true},
		{"source": "iceberg", "value": "upsert-on-v1"},
	)
}
