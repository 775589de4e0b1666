# Table contract (SW-TABLE): helpers of the Iceberg-catalog side, on input.facts.iceberg
# (docs/facts-iceberg.md). Every live finding has "source": "iceberg" and the contract field
# concerned as its path. Helpers carry an _ice prefix: the contract side shares this package.
package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# The live facts, only when gathered.
_ice := lib.iceberg(input)

_ice_cfields := object.get(_table, "schema", [])

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

_ice_contract_partition := _table.partition_spec if is_array(_table.partition_spec)

_ice_spec_text(fields) := "unpartitioned" if {
	count(fields) == 0
} else := concat(", ", [sprintf("%v(%v)", [p.transform, p.source]) | some p in fields])

# ---------------------------------------------------------------------------------- format version

_ice_upsert_live if lower(object.get(_ice.properties, "write.upsert.enabled", "false")) == "true"

_ice_upsert if upsert_enabled(object.get(_table, "properties", {}))

_ice_upsert if _ice_upsert_live

# ------------------------------------------------------------------- identifier fields (SW-TABLE-004)

_ice_cids := object.get(_table, "identifier_fields", [])

# ------------------------------------------------------------------------------------- properties

_ice_prop_equal(c, l) if c == l

_ice_prop_equal(c, l) if {
	is_string(c)
	is_string(l)
	lower(c) in {"true", "false"}
	lower(c) == lower(l)
}
