package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-005

test_state005_kryo_with_full_compatibility if {
	inp := _t_operator(1, {"serializer": "kryo"})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-STATE-005"
	f.path == "state.operators[1].serializer"
	f.evidence == {"uid": "orders-enrich-join", "serializer": "kryo", "compatibility": "full"}
}

test_state005_kryo_with_backward_transitive if {
	findings := warn with input as {"contract": {
		"state": {"operators": [{"uid": "a", "serializer": "avro"}, {"uid": "b", "serializer": "kryo"}]},
		"schema_evolution": {"compatibility": "backward_transitive"},
	}}
	lib.rule_paths(findings, "SW-STATE-005") == {"state.operators[1].serializer"}
}

test_state005_kryo_with_compatibility_none_passes if {
	findings := warn with input as {"contract": {
		"state": {"operators": [{"uid": "b", "serializer": "kryo"}]},
		"schema_evolution": {"compatibility": "none"},
	}}
	lib.no_rule(findings, "SW-STATE-005")
}

test_state005_kryo_without_schema_evolution_is_under_the_default_backward if {
	findings := warn with input as {"contract": {"state": {"operators": [{"uid": "b", "serializer": "kryo"}]}}}
	some f in findings
	f.rule == "SW-STATE-005"
	f.evidence.compatibility == "backward"
	# a compatibility that is none of the modes reads as the default too
	odd := warn with input as {"contract": {"state": {"operators": [{"uid": "b", "serializer": "kryo"}]}, "schema_evolution": {"compatibility": 3}}}
	lib.rule_paths(odd, "SW-STATE-005") == {"state.operators[0].serializer"}
}
