package streamwarden.schema

import rego.v1

import data.streamwarden.lib

test_schema009_weakenings if {
	cases := [
		["full", "backward", ["a weaker mode"]],
		["full", "forward", ["a weaker mode"]],
		["full", "none", ["a weaker mode"]],
		["backward", "none", ["a weaker mode"]],
		["forward_transitive", "none", ["a weaker mode", "no longer transitive: only the base version would be checked"]],
		["full_transitive", "full", ["no longer transitive: only the base version would be checked"]],
		["backward_transitive", "backward", ["no longer transitive: only the base version would be checked"]],
		["backward_transitive", "full", ["no longer transitive: only the base version would be checked"]],
		["full_transitive", "backward_transitive", ["a weaker mode"]],
		["backward", "forward", ["a change of direction: the side that upgrades last loses its protection"]],
		["forward_transitive", "backward_transitive", ["a change of direction: the side that upgrades last loses its protection"]],
	]
	every c in cases {
		[b, h, reasons] := c
		inp := _te_modes_in(b, h)
		warned := warn with input as inp
		some f in warned
		f.rule == "SW-SCHEMA-009"
		f.path == "schema_evolution.compatibility"
		f.value == h
		f.evidence == {"base": b, "head": h, "reasons": reasons}
	}
}

test_schema009_strengthening_and_same_pass if {
	cases := [
		["none", "backward"], ["backward", "full"], ["forward", "forward_transitive"],
		["full", "full_transitive"], ["backward", "backward"], ["none", "none"],
		["backward_transitive", "full_transitive"],
	]
	every c in cases {
		[b, h] := c
		inp := _te_modes_in(b, h)
		warned := warn with input as inp
		lib.no_rule(warned, "SW-SCHEMA-009")
	}
}

test_schema009_section_removed_is_the_default_backward if {
	head := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution"])
	inp := _te_in2(_te_contract(_te_fields, "full"), head)
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-SCHEMA-009"
	f.evidence == {"base": "full", "head": "backward", "reasons": ["a weaker mode"]}
	# and from backward, removing the section changes nothing
	inp2 := _te_in2(_te_contract(_te_fields, "backward"), head)
	warned2 := warn with input as inp2
	count(warned2) == 0
}

test_schema009_section_added_passes if {
	base := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution"])
	inp := _te_in2(base, _te_contract(_te_fields, "full"))
	warned := warn with input as inp
	count(warned) == 0
}

test_schema009_weird_values_read_as_the_default if {
	# (validation refuses them; a document built by hand may hold them)
	base := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"compatibility": 3}})
	inp := _te_in2(base, _te_contract(_te_fields, "backward"))
	warned := warn with input as inp
	count(warned) == 0
	base2 := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": "x"})
	inp2 := _te_in2(base2, _te_contract(_te_fields, "backward"))
	warned2 := warn with input as inp2
	count(warned2) == 0
	head3 := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": "x"})
	inp3 := _te_in2(_te_contract(_te_fields, "full"), head3)
	warned3 := warn with input as inp3
	some f in warned3
	f.evidence.head == "backward"
}

test_schema009_unknown_head_mode_is_not_judged if {
	inp := _te_modes_in("full_transitive", "sideways")
	warned := warn with input as inp
	count(warned) == 0
}

test_schema009_allow_renames_turned_on if {
	base := json.remove(_te_contract(_te_fields, "full"), ["schema_evolution/allow_renames"])
	head := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"allow_renames": true}})
	inp := _te_in2(base, head)
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-SCHEMA-009"
	f.path == "schema_evolution.allow_renames"
	f.evidence == {"base": null, "head": true}
	contains(f.message, "from absent (false)")
}

test_schema009_coordinate_with_state_turned_off if {
	base := object.union(_te_contract(_te_fields, "full"), {"schema_evolution": {"coordinate_with_state": true}})
	every head in [_te_contract(_te_fields, "full"), json.remove(_te_contract(_te_fields, "full"), ["schema_evolution/coordinate_with_state"])] {
		inp := _te_in2(base, head)
		warned := warn with input as inp
		some f in warned
		f.rule == "SW-SCHEMA-009"
		f.path == "schema_evolution.coordinate_with_state"
	}
}

test_schema009_fires_without_table_schema if {
	base := {"schema_evolution": {"compatibility": "full"}}
	inp := _te_in2(base, {"schema_evolution": {"compatibility": "backward"}})
	warned := warn with input as inp
	lib.rule_paths(warned, "SW-SCHEMA-009") == {"schema_evolution.compatibility"}
}

test_schema009_protect_consumers_turned_off if {
	base := _te_contract(_te_fields, "full")
	head := object.union(base, {"schema_evolution": {"protect_consumers": false}})
	inp := _te_in2(base, head)
	warned := warn with input as inp
	[f] := [x | some x in warned; x.path == "schema_evolution.protect_consumers"]
	f.rule == "SW-SCHEMA-009"
	f.evidence == {"base": null, "head": false}
	contains(f.message, "goes from absent (true) in the base (origin/main) to false")
	# from an explicit true too; false to false, false to true and absent to true say nothing
	inp2 := _te_in2(object.union(base, {"schema_evolution": {"protect_consumers": true}}), head)
	lib.rule_paths(warn, "SW-SCHEMA-009") == {"schema_evolution.protect_consumers"} with input as inp2
	inp3 := _te_in2(head, head)
	lib.no_rule(warn, "SW-SCHEMA-009") with input as inp3
	inp4 := _te_in2(head, base)
	lib.no_rule(warn, "SW-SCHEMA-009") with input as inp4
	inp5 := _te_in2(base, object.union(base, {"schema_evolution": {"protect_consumers": true}}))
	lib.no_rule(warn, "SW-SCHEMA-009") with input as inp5
}

test_schema012_the_base_decides_consumers_and_protection if {
	head_fields := _te_drop(_te_fields, 5)
	# the pull request drops the consumers with the column: the base's consumers still read it
	inp := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), _te_contract(head_fields, "backward"))
	count(_te_012(deny)) == 1 with input as inp
	# consumers only the pull request adds are not protected yet
	inp2 := _te_in2(_te_contract(_te_fields, "backward"), _te_consumed(_te_contract(head_fields, "backward")))
	count(_te_012(deny)) == 0 with input as inp2
	# protection off at the base: nothing, whatever head says
	off := {"schema_evolution": {"protect_consumers": false}}
	base_off := object.union(_te_consumed(_te_contract(_te_fields, "backward")), off)
	inp3 := _te_in2(base_off, _te_consumed(_te_contract(head_fields, "backward")))
	count(_te_012(deny)) == 0 with input as inp3
	# turned off by the pull request itself: still protected (and SW-SCHEMA-009 warns)
	inp4 := _te_in2(_te_consumed(_te_contract(_te_fields, "backward")), object.union(_te_consumed(_te_contract(head_fields, "backward")), off))
	count(_te_012(deny)) == 1 with input as inp4
	lib.rule_paths(warn, "SW-SCHEMA-009") == {"schema_evolution.protect_consumers"} with input as inp4
}
