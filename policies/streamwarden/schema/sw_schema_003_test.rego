package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-SCHEMA-003

test_schema003_optional_made_required_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, _te_set(_te_fields, 2, {"required": true}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-003"
		f.path == "table.schema[2].required"
		f.evidence.base_required == null
	}
}

test_schema003_explicit_false_made_required if {
	base := _te_contract(_te_set(_te_fields, 5, {"required": false}), "none")
	inp := _te_in2(base, _te_contract(_te_set(_te_fields, 5, {"required": true}), "none"))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-003"
	f.evidence.base_required == false
}

test_schema003_required_stays_required_passes if {
	inp := _te_in("none", _te_fields)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-SCHEMA-003")
}
