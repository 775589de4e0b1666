# Schema evolution (SW-SCHEMA): the Iceberg-catalog side, on input.facts.iceberg.schema and
# input.facts.iceberg.schemas (docs/facts-iceberg.md). The schema comparison is shared with
# SW-TABLE-001 through the pure function data.streamwarden.table.ice_behind, so the two rules never
# report the same drift twice.
package streamwarden.schema

import rego.v1

import data.streamwarden.lib
import data.streamwarden.table

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: The live table schema must not be ahead of the contract
# description: |
#   Fires when the contract's table.schema matches an older schema of the live table exactly
#   (same fields, ids, types and required-ness) while the table's current schema id is newer:
#   the table evolved out of band, without the contract. Reported instead of SW-TABLE-001's
#   per-field differences, which the evolution explains; the evidence lists the fields added,
#   removed and changed since the schema the contract describes.
# custom:
#   id: SW-SCHEMA-008
#   severity: error
#   remediation: |
#     Bring the contract up to the live schema (and review the change under the contract's
#     schema_evolution mode), or revert the out-of-band change on the table.
#   example: |
#     # the contract describes schema id 1; someone ran ALTER TABLE ADD COLUMN, the table is at id 2
deny contains f if {
	matched := table.ice_behind(object.get(input.contract, ["table", "schema"], []), _ice)
	old := _ice_schema(matched)
	live := _ice.schema
	added := _ice_names(live.fields) - _ice_names(old.fields)
	removed := _ice_names(old.fields) - _ice_names(live.fields)
	changed := {lf.name |
		some lf in live.fields
		some of in old.fields
		of.id == lf.id
		[of.name, of.type, of.required] != [lf.name, lf.type, lf.required]
	}
	f := {
		"rule": "SW-SCHEMA-008",
		"message": sprintf(
			"the live table %s is at schema id %v but table.schema describes its older schema id %v: the table evolved without the contract (added %v, removed %v, changed %v)",
			[_ice.identifier, live.schema_id, matched, sort(added), sort(removed), sort(changed)],
		),
		"path": "table.schema",
		"source": "iceberg",
		"value": sprintf("%v->%v", [matched, live.schema_id]),
		"evidence": {
			"live_schema_id": live.schema_id,
			"contract_schema_id": matched,
			"added": sort(added),
			"removed": sort(removed),
			"changed": sort(changed),
		},
	}
}

_ice := lib.iceberg(input)

_ice_schema(id) := s if {
	some s in _ice.schemas
	s.schema_id == id
}

_ice_names(fields) := {f.name | some f in fields}
