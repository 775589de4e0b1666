package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-SCHEMA-010

test_schema010_promotion_under_forward_modes if {
	every mode in ["forward", "full", "forward_transitive", "full_transitive"] {
		inp := _te_in(mode, _te_set(_te_fields, 3, {"type": "long"}))
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-010"
		f.path == "table.schema[3].type"
		f.evidence.old_type == "int"
		f.evidence.head_type == "long"
		f.evidence.commit == "b0b0b0b0b0b0b0b0"
		lib.no_rule(denied, "SW-SCHEMA-002")
	}
}

test_schema010_decimal_widening_under_full if {
	inp := _te_in("full", _te_set(_te_fields, 2, {"type": "decimal(18,2)"}))
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-010") == {"table.schema[2].type"}
}

test_schema010_not_under_backward_or_none if {
	every mode in ["none", "backward", "backward_transitive"] {
		inp := _te_in(mode, _te_set(_te_fields, 3, {"type": "long"}))
		denied := deny with input as inp
		lib.no_rule(denied, "SW-SCHEMA-010")
	}
}

test_schema010_transitive_checks_every_earlier_version if {
	fields := _te_set(_te_fields, 3, {"type": "long"})
	every mode in ["forward_transitive", "full_transitive"] {
		inp := _te_in_history(mode, fields, fields, _te_history_types)
		denied := deny with input as inp
		some f in denied
		f.rule == "SW-SCHEMA-010"
		f.path == "table.schema[3].type"
		f.evidence.commit == "h2h2h2h2h2h2h2h2h2"
		f.evidence.old_type == "int"
		f.evidence.versions_differing == 2
		count(lib.rule_paths(denied, "SW-SCHEMA-010")) == 1
	}
}

test_schema010_transitive_non_promotion_in_history_fires if {
	fields := _te_set(_te_fields, 3, {"type": "long"})
	history := [_te_history_types[2]]
	inp := _te_in_history("forward_transitive", fields, fields, history)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-010"
	f.evidence.old_type == "string"
}

test_schema010_non_transitive_ignores_history if {
	fields := _te_set(_te_fields, 3, {"type": "long"})
	inp := _te_in_history("full", fields, fields, _te_history_types)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema010_not_with_002_on_the_same_field if {
	# base long -> head int is a non-promotion (002); history int must not add 010.
	history := [{"commit": "h1", "contract": _te_contract(_te_fields, "full_transitive")}]
	base := _te_set(_te_fields, 3, {"type": "long"})
	inp := _te_in_history("full_transitive", base, _te_set(_te_fields, 3, {"type": "string"}), history)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-SCHEMA-002") == {"table.schema[3].type"}
	lib.no_rule(denied, "SW-SCHEMA-010")
}

test_schema010_with_006_on_v3 if {
	base := _te_contract(_te_fields, "forward")
	head := _te_with_table(_te_contract(_te_set(_te_fields, 4, {"type": "timestamp"}), "forward"), {"format_version": 3, "partition_spec": [{"source": "order_date", "transform": "identity"}]})
	inp := _te_in2(base, head)
	denied := deny with input as inp
	lib.rule_ids(denied) == {"SW-SCHEMA-006", "SW-SCHEMA-010"}
}
