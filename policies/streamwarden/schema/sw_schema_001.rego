package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Fields old readers need must not be removed
# description: |
#   Under compatibility forward or full (readers still on the old schema read data written
#   with the new one), a reader that expects a required field breaks when the field is gone.
#   Fires for each field that is required in the base contract and has no pair in the head
#   contract (paired by id, renamed_from or name; a rename is not a removal). Under
#   forward_transitive and full_transitive every earlier version of the contract along the
#   first-parent history counts too: a field required in any earlier version and absent from
#   head fires, even if a later version already made it optional or dropped it. Optional
#   fields may go; under backward (and none) any field may go, unless the table has consumers
#   (SW-SCHEMA-012 then protects every column). The mode in force is the base's
#   schema_evolution.compatibility (absent means backward). One finding per field name,
#   pointing at table.schema with the removed name as value.
# custom:
#   id: SW-SCHEMA-001
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the field. To retire it, make it optional (required: false) in one release and
#     remove it in a later one, once no reader relies on it; under a transitive mode a field
#     that was ever required cannot go without a reviewed change of the compatibility mode.
#   example: |
#     # base: schema_evolution: {compatibility: forward}
#     #       table.schema: [{name: order_id, type: long, required: true}, {name: customer_id, type: long, required: true}]
#     table:
#       schema: [{name: order_id, type: long, required: true}]   # customer_id removed
deny contains f if {
	_evo_active
	_evo_mode in _evo_forward_modes
	some name in _evo_removed_required_names
	seen := _evo_required_in(name)
	[label, commit] := seen[0]
	f := {
		"rule": "SW-SCHEMA-001",
		"message": sprintf(
			"field %s was removed, but it is required in %s and schema_evolution.compatibility is %s: readers still on the old schema need it; keep the field, or make it optional first and remove it in a later release",
			[lib.quote(name), label, _evo_mode],
		),
		"path": "table.schema",
		"value": name,
		"evidence": {
			"field": name,
			"compatibility": _evo_mode,
			"required_in": label,
			"commit": commit,
			"versions_required": count(seen),
			"base_ref": _evo_base_ref,
		},
	}
}
