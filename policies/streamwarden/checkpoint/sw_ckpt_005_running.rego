package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# SW-CKPT-005 (running side): the running job deletes its checkpoints on cancel.
deny contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	window := _rollback_window
	is_string(cfg.externalized)
	cfg.externalized != "retain_on_cancellation"
	f := {
		"rule": "SW-CKPT-005",
		"message": sprintf(
			"the %s runs with externalized checkpoints %s while retention.rollback_window is %s: after a cancel it could not be restored; run it with RETAIN_ON_CANCELLATION",
			[_flink_ref, cfg.externalized, lib.fmt_ms(window)],
		),
		"path": "checkpoint.externalized",
		"source": "flink",
		"value": sprintf("running:%s", [cfg.externalized]),
		"evidence": {"job_id": _flink.job_id, "externalized": cfg.externalized, "rollback_window": window, "from": _run_source},
	}
}
