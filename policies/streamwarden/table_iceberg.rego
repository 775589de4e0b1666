# Table contract (SW-TABLE): the Iceberg-catalog side, on input.facts.iceberg (docs/facts-iceberg.md).
# Every finding here has "source": "iceberg" and the contract field concerned as its path.
# SW-TABLE-004 and SW-TABLE-006 keep their METADATA in table.rego; SW-TABLE-004's live body is here.
# Helpers carry an _ice prefix: table.rego shares this package.
package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# The live facts, only when gathered.
_ice := lib.iceberg(input)

_ice_contract_table := object.get(input.contract, "table", {})

_ice_cfields := object.get(_ice_contract_table, "schema", [])

_ice_name := lib.iceberg_name(_ice)

# ------------------------------------------------------------------------- schema comparison helpers

_ice_has_id(cf) if is_number(object.get(cf, "id", null))

# the live field a contract field stands for: by id when the contract gives one and it exists live,
# else by name
ice_live_field(cf, lfields) := lf if {
	_ice_has_id(cf)
	some lf in lfields
	lf.id == cf.id
} else := lf if {
	some lf in lfields
	lf.name == cf.name
}

_ice_field_equal(cf, lf) if {
	lf.name == cf.name
	lf.type == cf.type
	lf.required == object.get(cf, "required", false)
	_ice_id_ok(cf, lf)
}

_ice_id_ok(cf, _) if not _ice_has_id(cf)

_ice_id_ok(cf, lf) if cf.id == lf.id

# ice_same_schema(cfields, lfields): the contract's fields are exactly these live fields.
ice_same_schema(cfields, lfields) if {
	count(cfields) == count(lfields)
	every cf in cfields {
		some lf in lfields
		_ice_field_equal(cf, lf)
	}
}

# ice_behind(cfields, facts): the newest historical schema id of the live table (facts.iceberg) that
# the contract's fields match exactly, when it is older than the current one: the table evolved
# after the contract was written (SW-SCHEMA-008 reports it, SW-TABLE-001 stays silent). A pure
# function, so package streamwarden.schema can call it with its own arguments: regorus 0.13
# mis-evaluates rules of one package that read `input` when another package's rule pulls them in.
ice_behind(cfields, facts) := max(ids) if {
	count(cfields) > 0
	not ice_same_schema(cfields, facts.schema.fields)
	ids := {s.schema_id | some s in facts.schemas; ice_same_schema(cfields, s.fields)}
	count(ids) > 0
	max(ids) < facts.schema.schema_id
}

_ice_behind := ice_behind(_ice_cfields, _ice)

_ice_schema_diff_applies if {
	count(_ice_cfields) > 0
	not _ice_behind
}

_ice_req(b) := "required" if b == true else := "optional"

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

_ice_field_diffs(cf, lf) := [d |
	some d in [
		{"attr": "type", "contract": cf.type, "live": lf.type},
		{"attr": "required", "contract": object.get(cf, "required", false), "live": lf.required},
		{"attr": "name", "contract": cf.name, "live": lf.name},
		{"attr": "id", "contract": object.get(cf, "id", lf.id), "live": lf.id},
	]
	d.contract != d.live
]

# ------------------------------------------------------------------------------------ partitioning

_ice_pkey(p) := sprintf("%v:%v", [p.source, p.transform])

# void fields are removed partition fields (format v1 keeps them as void)
_ice_live_partition := [p | some p in _ice.partition_spec.fields; p.transform != "void"]

_ice_contract_partition := _ice_contract_table.partition_spec if is_array(_ice_contract_table.partition_spec)

# METADATA
# title: The live partition spec must match the contract
# description: |
#   Compares table.partition_spec (source column and transform, in order) with the live table's
#   default partition spec. Fires for a declared partition field the table lacks, a live
#   partition field the contract does not declare, and the same fields in another order. Void
#   fields (removed partition fields kept by format v1) are ignored. Silent when the contract
#   declares no partition_spec; an empty list means unpartitioned.
# custom:
#   id: SW-TABLE-002
#   severity: error
#   remediation: |
#     Evolve the table's partition spec (update_spec / ALTER TABLE ... ADD/DROP PARTITION FIELD)
#     to the contract, or update table.partition_spec to the live spec.
#   example: |
#     table:
#       partition_spec: [{source: event_time, transform: day}]   # the table is partitioned by hour
deny contains f if {
	some i, p in _ice_contract_partition
	live := {_ice_pkey(q) | some q in _ice_live_partition}
	not _ice_pkey(p) in live
	f := lib.finding(
		"SW-TABLE-002",
		sprintf("table.partition_spec[%d]", [i]),
		sprintf(
			"partition field %s(%s) is declared but not in the live partition spec of %s (spec id %v: %s)",
			[p.transform, p.source, _ice_name, _ice.partition_spec.spec_id, _ice_spec_text(_ice_live_partition)],
		),
		{"contract": p, "live_spec": _ice_live_partition, "spec_id": _ice.partition_spec.spec_id},
		{"source": "iceberg"},
	)
}

# SW-TABLE-002: a live partition field the contract does not declare
deny contains f if {
	_ice_contract_partition
	some q in _ice_live_partition
	declared := {_ice_pkey(p) | some p in _ice_contract_partition}
	not _ice_pkey(q) in declared
	f := lib.finding(
		"SW-TABLE-002",
		"table.partition_spec",
		sprintf(
			"the live table %s is partitioned by %s(%s) (spec id %v), which table.partition_spec does not declare",
			[_ice_name, q.transform, q.source, _ice.partition_spec.spec_id],
		),
		{"contract": _ice_contract_partition, "live": q, "spec_id": _ice.partition_spec.spec_id},
		{"source": "iceberg", "value": _ice_pkey(q)},
	)
}

# SW-TABLE-002: the same fields in another order
deny contains f if {
	declared := [_ice_pkey(p) | some p in _ice_contract_partition]
	live := [_ice_pkey(q) | some q in _ice_live_partition]
	declared != live
	{k | some k in declared} == {k | some k in live}
	f := lib.finding(
		"SW-TABLE-002",
		"table.partition_spec",
		sprintf(
			"the live partition spec of %s orders its fields %s, the contract %s",
			[_ice_name, _ice_spec_text(_ice_live_partition), _ice_spec_text(_ice_contract_partition)],
		),
		{"contract": _ice_contract_partition, "live": _ice_live_partition, "spec_id": _ice.partition_spec.spec_id},
		{"source": "iceberg", "value": "order"},
	)
}

_ice_spec_text(fields) := "unpartitioned" if {
	count(fields) == 0
} else := concat(", ", [sprintf("%v(%v)", [p.transform, p.source]) | some p in fields])

# ---------------------------------------------------------------------------------- format version

_ice_upsert_live if lower(object.get(_ice.properties, "write.upsert.enabled", "false")) == "true"

_ice_upsert if upsert_enabled(object.get(_ice_contract_table, "properties", {}))

_ice_upsert if _ice_upsert_live

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
	wanted := _ice_contract_table.format_version
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
	not _ice.format_version < object.get(_ice_contract_table, "format_version", 0)
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

# ------------------------------------------------------------------- identifier fields (SW-TABLE-004)

_ice_cids := object.get(_ice_contract_table, "identifier_fields", [])

# SW-TABLE-004 (METADATA in table.rego): live identifier fields differ from the contract's
deny contains f if {
	count(_ice_cids) > 0
	live := _ice.schema.identifier_fields
	{x | some x in _ice_cids} != {x | some x in live}
	f := lib.finding(
		"SW-TABLE-004",
		"table.identifier_fields",
		sprintf(
			"the live table %s has identifier fields %v, the contract declares %v",
			[_ice_name, live, _ice_cids],
		),
		{"contract": _ice_cids, "live": live},
		{"source": "iceberg"},
	)
}

# SW-TABLE-004: upserts enabled on the live table, which has no identifier fields (when the contract
# declares none, the contract side already reports a contract that enables upserts itself)
deny contains f if {
	count(_ice_cids) == 0
	not upsert_enabled(object.get(_ice_contract_table, "properties", {}))
	_ice_upsert_live
	count(_ice.schema.identifier_fields) == 0
	f := lib.finding(
		"SW-TABLE-004",
		"table.identifier_fields",
		sprintf(
			"the live table %s sets write.upsert.enabled=true but has no identifier fields: the upsert sink cannot key its deletes",
			[_ice_name],
		),
		{"live_write.upsert.enabled": _ice.properties["write.upsert.enabled"], "live": []},
		{"source": "iceberg", "value": "live-upsert-without-identifier"},
	)
}

# ------------------------------------------------------------------------------------- properties

_ice_prop_equal(c, l) if c == l

_ice_prop_equal(c, l) if {
	is_string(c)
	is_string(l)
	lower(c) in {"true", "false"}
	lower(c) == lower(l)
}

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
	some key, wanted in object.get(_ice_contract_table, "properties", {})
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
