package streamwarden.checkpoint

import rego.v1

test_running_without_checkpoints_fires_001 if {
	inp := _tr_input(object.union(_tr_cfg, {"enabled": false, "interval": null}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-001"
	f.source == "flink"
	contains(f.message, "does not checkpoint")
}

test_finished_job_without_checkpoints_is_not_running if {
	inp := _tr_input(object.union(_tr_cfg, {"enabled": false}), "finished")
	not "SW-CKPT-001" in _tr_rules(deny) with input as inp
}

test_stateless_pipeline_without_checkpoints_is_fine if {
	inp := object.union(
		_tr_input(object.union(_tr_cfg, {"enabled": false}), "running"),
		{"contract": {"state": {"operators": []}, "job": {"sinks": [{"name": "s", "delivery": "at_least_once"}]}}},
	)
	not "SW-CKPT-001" in _tr_rules(deny) with input as inp
}
