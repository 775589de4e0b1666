package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# ---------------------------------------------------------------- SW-SCHEMA-004

# METADATA
# title: New required fields need a default
# description: |
#   Rows written before a field existed have no value for it; Iceberg fills them from the
#   field's initial default and refuses a new required field without one. Fires for each head
#   field that pairs with no base field (by id, renamed_from or name), is required and has no
#   default, under every compatibility mode. A rename without an id or renamed_from reads as
#   a removal plus an addition, so it can fire here too.
# custom:
#   id: SW-SCHEMA-004
#   kind: diff
#   severity: error
#   remediation: |
#     Add the field as optional, or give it a default (the initial default of the old rows);
#     for a rename, keep the field's id or declare renamed_from.
#   example: |
#     table:
#       schema: [{name: channel, type: string, required: true}]   # new, no default
deny contains f if {
	_evo_active
	some hi in _evo_unpaired_heads
	h := _evo_head_fields[hi]
	is_object(h)
	_evo_required(h)
	object.get(h, "default", null) == null
	name := object.get(h, "name", null)
	f := {
		"rule": "SW-SCHEMA-004",
		"message": sprintf(
			"field %s is new and required but has no default: the rows written before it have no value and Iceberg refuses it; make it optional or give it a default",
			[lib.quote(name)],
		),
		"path": sprintf("table.schema[%d].default", [hi]),
		"value": name,
		"evidence": {"field": name, "type": _evo_type(h), "required": true, "default": null, "compatibility": _evo_mode},
	}
}
