package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Promotions must not change partition values
# description: |
#   Iceberg refuses a type promotion of a partition source column when the partition
#   transform would compute other values for the same data: the existing partitions would no
#   longer match. Fires for each field whose base -> head type change is an allowed promotion
#   (see SW-SCHEMA-002) and that is the source of a head table.partition_spec entry whose
#   transform output changes, under every compatibility mode:
#
#   | transform | int->long, float->double, decimal widening | date->timestamp / timestamp_ns |
#   |---|---|---|
#   | identity | same values | changes |
#   | bucket[N] | same values (hashed as long / unscaled) | changes |
#   | truncate[W] | same values | changes |
#   | year, month, day, hour | same values | same values |
#   | void | same values (always null) | same values |
#
#   date -> timestamp is a promotion only on format version 3, so this fires there.
# custom:
#   id: SW-SCHEMA-006
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the column's type, or change the partition spec first (for example day(col)
#     instead of identity(col)) so the promotion keeps the partition values; or add a new
#     column with the new type.
#   example: |
#     # base: {name: order_date, type: date}; format_version: 3
#     table:
#       format_version: 3
#       schema: [{name: order_date, type: timestamp}]
#       partition_spec: [{source: order_date, transform: identity}]
deny contains f if {
	some [hi, _, old, new] in _evo_type_changes
	_evo_promotion(old, new)
	name := _evo_name(_evo_head_fields[hi])
	changed := [sprintf("table.partition_spec[%d] (%s)", [k, p.transform]) |
		some k, p in _evo_partition_spec
		is_object(p)
		object.get(p, "source", null) == name
		_evo_transform_changes(object.get(p, "transform", null), old, new)
	]
	count(changed) > 0
	f := {
		"rule": "SW-SCHEMA-006",
		"message": sprintf(
			"field %s is promoted from %v to %v, but it is the source of %s whose output would change: Iceberg refuses the promotion; keep the type or change the partition transform first",
			[lib.quote(name), old, new, concat(", ", changed)],
		),
		"path": sprintf("table.schema[%d].type", [hi]),
		"evidence": {"field": name, "base_type": old, "head_type": new, "partitions": changed},
	}
}
