package streamwarden.table

import rego.v1

# METADATA
# title: Upsert tables need identifier fields
# description: |
#   The Iceberg Flink sink in upsert mode writes equality deletes keyed by the table's
#   identifier fields; without them it cannot start (or cannot deduplicate). The contract side
#   fires when table.properties sets write.upsert.enabled to "true" but table.identifier_fields
#   is absent or empty. The catalog side fires when the live table has no identifier fields or
#   they differ from the contract.
# custom:
#   id: SW-TABLE-004
#   severity: error
#   remediation: |
#     Declare table.identifier_fields (required, primitive columns that identify a row, for
#     example [order_id]) and set them on the table, or drop write.upsert.enabled.
#   example: |
#     table:
#       properties: {write.upsert.enabled: "true"}   # no identifier_fields
deny contains f if {
	upsert_enabled(object.get(_table, "properties", {}))
	fields := object.get(_table, "identifier_fields", [])
	count(fields) == 0
	f := {
		"rule": "SW-TABLE-004",
		"message": sprintf("table.properties sets write.upsert.enabled to true but table.identifier_fields is empty: upserts need a row identity; declare identifier_fields: required primitive columns of table.schema that identify a row%s", [_t004_hint]),
		"path": "table.identifier_fields",
		"evidence": {
			"write.upsert.enabled": _table.properties["write.upsert.enabled"],
			"identifier_fields": object.get(_table, "identifier_fields", null),
		},
	}
}
