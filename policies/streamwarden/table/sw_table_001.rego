package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: The live table schema must match the contract
# description: |
#   Compares table.schema with the live table's current schema (fields matched by id when the
#   contract gives one, else by name), one finding per difference: a declared field missing from
#   the table, a live field the contract does not declare, a different type (compared after
#   normalization: decimal(12,2) equals Iceberg's decimal(12, 2)), a different required-ness, a
#   different name for the same id, or a different id for the same name. When the contract
#   matches an older schema of the table exactly, the table evolved out of band: SW-SCHEMA-008
#   reports that instead.
# custom:
#   id: SW-TABLE-001
#   severity: error
#   remediation: |
#     Make the contract and the table agree: evolve the table (ALTER TABLE / update_schema) to
#     the contract, or update table.schema to what the table really holds, in the same change.
#   example: |
#     table:
#       schema:
#         - {name: amount, type: "decimal(12,2)", id: 3}   # the live table has decimal(14,2)
deny contains f if {
	_ice_schema_diff_applies
	some i, cf in _ice_cfields
	not ice_live_field(cf, _ice.schema.fields)
	f := lib.finding(
		"SW-TABLE-001",
		sprintf("table.schema[%d]", [i]),
		sprintf(
			"field %s (%s) is declared in table.schema but missing from the live table %s (schema id %v)",
			[cf.name, cf.type, _ice_name, _ice.schema.schema_id],
		),
		{"field": cf.name, "contract": cf, "live": null, "schema_id": _ice.schema.schema_id},
		{"source": "iceberg"},
	)
}

# SW-TABLE-001: a live field the contract does not declare
deny contains f if {
	_ice_schema_diff_applies
	some lf in _ice.schema.fields
	matched := {m.id | some cf in _ice_cfields; m := ice_live_field(cf, _ice.schema.fields)}
	not lf.id in matched
	f := lib.finding(
		"SW-TABLE-001",
		"table.schema",
		sprintf(
			"the live table %s has field %s (id %v, %s %s) that table.schema does not declare",
			[_ice_name, lf.name, lf.id, _ice_req(lf.required), lf.type],
		),
		{"field": lf.name, "contract": null, "live": lf, "schema_id": _ice.schema.schema_id},
		{"source": "iceberg", "value": lf.name},
	)
}

# SW-TABLE-001: type, required-ness, name and id of a matched field
deny contains f if {
	_ice_schema_diff_applies
	some i, cf in _ice_cfields
	lf := ice_live_field(cf, _ice.schema.fields)
	some d in _ice_field_diffs(cf, lf)
	f := lib.finding(
		"SW-TABLE-001",
		sprintf("table.schema[%d].%s", [i, d.attr]),
		sprintf(
			"field %s: the live table %s has %s %s, the contract %s",
			[cf.name, _ice_name, d.attr, lib.quote(d.live), lib.quote(d.contract)],
		),
		{"field": cf.name, "attribute": d.attr, "contract": d.contract, "live": d.live, "schema_id": _ice.schema.schema_id},
		{"source": "iceberg"},
	)
}
