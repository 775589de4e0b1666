package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

# SW-CKPT-007 (running side): exactly-once sinks behind an at-least-once running job.
deny contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	cfg.mode == "at_least_once"
	count(exactly_once_sinks) > 0
	f := {
		"rule": "SW-CKPT-007",
		"message": sprintf(
			"the %s checkpoints at_least_once but sinks promise exactly_once delivery (%s): a restore can commit records twice",
			[_flink_ref, concat(", ", exactly_once_sinks)],
		),
		"path": "checkpoint.mode",
		"source": "flink",
		"value": "running:at_least_once",
		"evidence": {"job_id": _flink.job_id, "mode": cfg.mode, "exactly_once_sinks": exactly_once_sinks, "from": _run_source},
	}
}
