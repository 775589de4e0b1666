package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-012

test_table012_out_of_band_writer if {
	g := {"operation": "overwrite", "writer": "spark", "count": 1, "snapshot_ids": [4711]}
	inp := _t_lineage({"out_of_band": [g]})
	findings := warn with input as inp
	[f] := ice_rules(findings, "SW-TABLE-012")
	f.value == "overwrite/spark"
	f.evidence.snapshot_ids == [4711]
	contains(f.message, `1 overwrite snapshot(s) on branch main of sales.orders (catalog lake) carry no Flink lineage (writer "spark")`)
}

test_table012_no_strangers_pass if {
	inp := _t_lineage({"out_of_band": []})
	findings := warn with input as inp
	lib.no_rule(findings, "SW-TABLE-012")
}
