package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-SCHEMA-004

test_schema004_required_added_without_default_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, array.concat(_te_fields, [{"name": "channel", "type": "string", "required": true}]))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-004"
		f.path == "table.schema[6].default"
		f.value == "channel"
	}
}

test_schema004_renamed_from_unknown_field_is_an_addition if {
	field := {"name": "channel", "type": "string", "required": true, "renamed_from": "medium"}
	inp := _te_in("none", array.concat(_te_fields, [field]))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-004") == {"table.schema[6].default"}
}

test_schema004_falsy_default_counts_as_a_default if {
	fields := array.concat(_te_fields, [{"name": "flag", "type": "boolean", "required": true, "default": false}, {"name": "n", "type": "int", "required": true, "default": 0}])
	inp := _te_in("none", fields)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-004")
}
