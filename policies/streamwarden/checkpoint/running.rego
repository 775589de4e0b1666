# Checkpoint contract (SW-CKPT): helpers of the running job's side of SW-CKPT-001, 004, 005, 007
# and 008, read from /jobs/:id/checkpoints/config (input.facts.flink.checkpoint_config,
# docs/facts-flink.md). The retained count (006) is not reported by that endpoint, so only the
# contract and the repository can break it.
package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

_run_cfg := c if {
	_flink_running
	c := _flink_cfg
}

_run_source := sprintf("%s, %s", [_flink_ref, _run_cfg.source]) if is_string(_run_cfg.source)

else := _flink_ref
