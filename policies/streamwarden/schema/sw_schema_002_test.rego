package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-SCHEMA-002

test_schema002_non_promotions_fire_under_every_mode if {
	every mode in _te_all_modes {
		inp := _te_in(mode, _te_set(_te_fields, 0, {"type": "int"}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-002"
		f.path == "table.schema[0].type"
		f.evidence.base_type == "long"
		f.evidence.head_type == "int"
		lib.no_rule(denied, "SW-SCHEMA-010")
	}
}

test_schema002_string_binary_both_ways if {
	inp := _te_in("none", _te_set(_te_fields, 5, {"type": "binary"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[5].type"}
	base := _te_contract(_te_set(_te_fields, 5, {"type": "binary"}), "none")
	inp2 := _te_in2(base, _te_contract(_te_fields, "none"))
	denied2 := deny with input as inp2
	lib.rule_paths(denied2, "SW-SCHEMA-002") == {"table.schema[5].type"}
}

test_schema002_decimal_scale_change if {
	inp := _te_in("backward", _te_set(_te_fields, 2, {"type": "decimal(14,4)"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	contains(f.message, "same scale")
}

test_schema002_decimal_narrowing_and_equal_precision if {
	inp := _te_in("backward", _te_set(_te_fields, 2, {"type": "decimal(10,2)"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[2].type"}
}

test_schema002_decimal_to_other_type if {
	inp := _te_in("backward", _te_set(_te_fields, 2, {"type": "double"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	not contains(f.message, "same scale")
}

test_schema002_decimal_with_zero_scale_widens if {
	base := _te_contract([{"name": "n", "type": "decimal(9,0)"}], "backward")
	head := _te_contract([{"name": "n", "type": "decimal(10,0)"}], "backward")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema002_date_to_timestamp_needs_v3 if {
	inp := _te_in("none", _te_set(_te_fields, 4, {"type": "timestamp"}))
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	f.path == "table.schema[4].type"
	contains(f.message, "format_version 3")
}

test_schema002_date_to_timestamp_on_v3_is_a_promotion if {
	every t in ["timestamp", "timestamp_ns"] {
		head := _te_with_table(_te_contract(_te_set(_te_fields, 4, {"type": t}), "backward"), {"format_version": 3})
		inp := _te_in2(_te_contract(_te_fields, "backward"), head)
		denied := deny with input as inp
		count(denied) == 0
	}
}

test_schema002_unknown_becomes_any_type_on_v3 if {
	every t in ["long", "decimal(12,2)", "struct<a:int>", "list<string>", "variant", "geometry(srid:4326)"] {
		base := _te_with_table(_te_contract([{"name": "later", "type": "unknown"}], "backward"), {"format_version": 3})
		head := _te_with_table(_te_contract([{"name": "later", "type": t}], "backward"), {"format_version": 3})
		denied := deny with input as _te_in2(base, head)
		lib.no_rule(denied, "SW-SCHEMA-002")
	}
}

test_schema002_unknown_stays_unknown_below_v3 if {
	base := _te_contract([{"name": "later", "type": "unknown"}], "none")
	head := _te_contract([{"name": "later", "type": "long"}], "none")
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as _te_in2(base, head)
}

test_schema002_decimal_precision_stops_at_38 if {
	base := _te_contract([{"name": "n", "type": "decimal(38,2)"}], "none")
	head := _te_contract([{"name": "n", "type": "decimal(39,2)"}], "none")
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as _te_in2(base, head)
}

test_schema002_geo_crs_change_is_no_promotion if {
	base := _te_with_table(_te_contract([{"name": "g", "type": "geometry(srid:4326)"}], "none"), {"format_version": 3})
	head := _te_with_table(_te_contract([{"name": "g", "type": "geometry(srid:3857)"}], "none"), {"format_version": 3})
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as _te_in2(base, head)
}

test_schema002_date_to_tz_types_never if {
	every t in ["timestamptz", "timestamptz_ns"] {
		head := _te_with_table(_te_contract(_te_set(_te_fields, 4, {"type": t}), "backward"), {"format_version": 3})
		inp := _te_in2(_te_contract(_te_fields, "backward"), head)
		denied := deny with input as inp
		lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[4].type"}
	}
}

test_schema002_nested_types_compare_as_strings if {
	base := _te_contract([{"name": "tags", "type": "list<int>"}, {"name": "m", "type": "map<string,long>"}], "none")
	same := _te_in2(base, base)
	denied_same := deny with input as same
	count(denied_same) == 0
	head := _te_contract([{"name": "tags", "type": "list<long>"}, {"name": "m", "type": "map<string,long>"}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[0].type"}
}

test_schema002_reverse_promotion if {
	base := _te_contract([{"name": "ratio", "type": "double"}], "none")
	head := _te_contract([{"name": "ratio", "type": "float"}], "none")
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[0].type"}
}

test_schema002_type_change_of_renamed_field if {
	inp := _te_in("none", _te_set(_te_fields, 0, {"name": "id", "type": "string"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[0].type"}
	lib.rule_paths(denied, "SW-SCHEMA-005") == {"table.schema[0].name"}
}

test_schema002_date_to_timestamp_without_format_version if {
	head := json.remove(_te_contract(_te_set(_te_fields, 4, {"type": "timestamp"}), "none"), ["table/format_version"])
	inp := _te_in2(_te_contract(_te_fields, "none"), head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-002"
	f.evidence.format_version == 0
}

test_schema012_widening_adding_and_optional_to_required_are_not_its_concern if {
	base := _te_consumed(_te_contract(_te_fields, "backward"))
	added := array.concat(_te_fields, [{"name": "channel", "type": "string"}])
	widened := _te_set(_te_fields, 3, {"type": "long"})
	narrowed := _te_set(_te_fields, 0, {"type": "int"})
	made_required := _te_set(_te_fields, 2, {"required": true})
	every fields in [added, widened, narrowed, made_required] {
		inp := _te_in2(base, _te_consumed(_te_contract(fields, "backward")))
		count(_te_012(deny)) == 0 with input as inp
	}
	# a narrowed type is SW-SCHEMA-002's, a field made required SW-SCHEMA-003's
	inp2 := _te_in2(base, _te_consumed(_te_contract(narrowed, "backward")))
	lib.rule_paths(deny, "SW-SCHEMA-002") == {"table.schema[0].type"} with input as inp2
}
