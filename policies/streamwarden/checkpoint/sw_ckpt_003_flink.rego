package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

# SW-CKPT-003 (running side): a checkpoint setting of the running job differs from the contract.
# Where the running job does not checkpoint at all, SW-CKPT-001 reports it and this stays quiet.
deny contains f if {
	cfg := _flink_cfg
	cfg.enabled == true
	some field, kind in _flink_compared
	want := _ckpt[field]
	have := cfg[field]
	have != null
	want != have
	f := {
		"rule": "SW-CKPT-003",
		"message": sprintf(
			"contract checkpoint.%s %s vs %s %s from %s: the job does not run with the checkpoint settings the contract promises; redeploy it with checkpoint.%s %s or change the contract",
			[field, _flink_fmt(kind, want), _flink_ref, _flink_fmt(kind, have), cfg.source, field, _flink_fmt(kind, want)],
		),
		"path": sprintf("checkpoint.%s", [field]),
		"source": "flink",
		"value": sprintf("flink:%v", [have]),
		"evidence": {
			"setting": field,
			"contract": want,
			"running": have,
			"job_id": _flink.job_id,
			"source": cfg.source,
		},
	}
}
