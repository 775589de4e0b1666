package streamwarden.checkpoint

import rego.v1

test_delete_on_cancellation_with_rollback_window_fires_005 if {
	inp := _tr_input(object.union(_tr_cfg, {"externalized": "delete_on_cancellation"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-005"
	contains(f.message, "delete_on_cancellation")
}

test_no_rollback_window_no_005 if {
	base := _tr_input(object.union(_tr_cfg, {"externalized": "none"}), "running")
	inp := json.patch(base, [{"op": "remove", "path": "/contract/retention"}])
	not "SW-CKPT-005" in _tr_rules(deny) with input as inp
}
