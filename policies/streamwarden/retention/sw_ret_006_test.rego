package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-RET-006

test_ret006_default_false_fires if {
	inp := _t_ice({"properties": {"write.metadata.delete-after-commit.enabled": "false"}})
	findings := warn with input as inp
	[f] := _t_rules(findings, "SW-RET-006")
	f.path == `table.properties["write.metadata.delete-after-commit.enabled"]`
	f.source == "iceberg"
}

test_ret006_true_in_capitals_passes if {
	inp := _t_ice({"properties": {"write.metadata.delete-after-commit.enabled": "TRUE"}})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-RET-006")
}

test_ret006_silent_without_facts if {
	inp := lib.example_input
	findings := warn with input as inp
	lib.no_rule(findings, "SW-RET-006")
}
