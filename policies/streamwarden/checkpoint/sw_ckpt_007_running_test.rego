package streamwarden.checkpoint

import rego.v1

test_at_least_once_running_with_exactly_once_sink_fires_007 if {
	inp := _tr_input(object.union(_tr_cfg, {"mode": "at_least_once"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-007"
	contains(f.message, "orders-table")
}

test_message_names_the_source_endpoint if {
	inp := _tr_input(object.union(_tr_cfg, {"mode": "at_least_once"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-007"
	contains(f.evidence.from, "/checkpoints/config")
}
