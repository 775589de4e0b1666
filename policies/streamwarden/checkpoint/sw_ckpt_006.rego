package streamwarden.checkpoint

import rego.v1

# METADATA
# title: Enough checkpoints must be retained
# description: |
#   Fires when checkpoint.num_retained is below retention.checkpoints.num_retained, or below 2
#   when a positive retention.rollback_window is declared (one retained checkpoint leaves
#   nothing to roll back to if it is corrupt). One finding names the larger requirement. An
#   absent num_retained in a declared checkpoint section counts as Flink's default of 1.
# custom:
#   id: SW-CKPT-006
#   severity: warning
#   remediation: |
#     Raise checkpoint.num_retained (and execution.checkpointing.num-retained) to at least
#     retention.checkpoints.num_retained, and to at least 2 when a rollback window is declared.
#   example: |
#     checkpoint: {interval: 60s, num_retained: 1}
#     retention: {checkpoints: {num_retained: 3}}
warn contains f if {
	_has_ckpt
	count(_retained_needed) > 0
	needed := max(_retained_needed)
	_num_retained < needed
	f := {
		"rule": "SW-CKPT-006",
		"message": sprintf(
			"checkpoint.num_retained is %s but the retention contract needs at least %v retained checkpoints; raise num_retained to %v",
			[_num_retained_text, needed, needed],
		),
		"path": "checkpoint.num_retained",
		"evidence": {
			"num_retained": object.get(_ckpt, "num_retained", null),
			"effective_num_retained": _num_retained,
			"required": needed,
			"retention_num_retained": object.get(input.contract, ["retention", "checkpoints", "num_retained"], null),
			"rollback_window": object.get(input.contract, ["retention", "rollback_window"], null),
		},
	}
}
