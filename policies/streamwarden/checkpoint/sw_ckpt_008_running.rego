package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# SW-CKPT-008 (running side): the running job tolerates unlimited checkpoint failures. (A
# running value merely different from the contract is SW-CKPT-003.)
warn contains f if {
	cfg := _run_cfg
	cfg.enabled == true
	n := cfg.tolerable_failures
	is_number(n)
	lib.unlimited_failures(n)
	f := {
		"rule": "SW-CKPT-008",
		"message": sprintf(
			"the %s tolerates unlimited failed checkpoints (%v): checkpoint failures never fail the job and go unnoticed",
			[_flink_ref, n],
		),
		"path": "checkpoint.tolerable_failures",
		"source": "flink",
		"value": "running:unlimited",
		"evidence": {"job_id": _flink.job_id, "tolerable_failures": n, "from": _run_source},
	}
}
