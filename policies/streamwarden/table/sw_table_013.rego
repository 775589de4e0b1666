package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: Table properties named in the contract must match the live table
# description: |
#   For each key of table.properties, compares the value with the live table's property (Iceberg's
#   default when the table does not set it; absent when there is no default). Booleans compare
#   case-insensitively. One finding per differing key.
# custom:
#   id: SW-TABLE-013
#   severity: warning
#   remediation: |
#     Set the property on the table (ALTER TABLE ... SET TBLPROPERTIES) or change the contract to
#     the live value.
#   example: |
#     table: {properties: {write.upsert.enabled: "true"}}   # the live table has "false"
warn contains f if {
	some key, wanted in object.get(_table, "properties", {})
	live := object.get(_ice.properties, key, null)
	not _ice_prop_equal(wanted, live)
	f := lib.finding(
		"SW-TABLE-013",
		sprintf(`table.properties["%s"]`, [key]),
		sprintf("table property %s is %v on the live table %s, the contract says %v", [key, lib.quote(live), _ice_name, lib.quote(wanted)]),
		{"property": key, "contract": wanted, "live": live, "defaulted": key in {k | some k in object.get(_ice, "properties_defaulted", [])}},
		{"source": "iceberg"},
	)
}
