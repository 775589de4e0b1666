package streamwarden.checkpoint

import rego.v1

test_unlimited_tolerable_failures_warns_008 if {
	inp := _tr_input(object.union(_tr_cfg, {"tolerable_failures": 2147483647}), "running")
	some f in warn with input as inp
	f.rule == "SW-CKPT-008"
	f.source == "flink"
}
