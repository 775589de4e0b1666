package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-RET-003

test_ret003_min_keep_below_contract if {
	inp := _t_ice({"retention": {"min_snapshots_to_keep": 1, "min_snapshots_to_keep_source": "default"}})
	findings := warn with input as inp
	[f] := _t_rules(findings, "SW-RET-003")
	f.path == "retention.snapshots.min_keep"
	f.evidence == {"min_snapshots_to_keep": 1, "source": "default", "min_keep": 20}
}

test_ret003_equal_passes if {
	inp := _t_ice({"retention": {"min_snapshots_to_keep": 20}})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-RET-003")
}
