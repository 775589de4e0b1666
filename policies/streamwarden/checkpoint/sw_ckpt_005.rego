package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Checkpoints must be retained on cancel when rollbacks are promised
# description: |
#   When retention.rollback_window is positive, the job must be restorable after a cancel, so
#   its checkpoints must be retained: fires when checkpoint.externalized is anything but
#   retain_on_cancellation. An absent externalized in a declared checkpoint section counts as
#   Flink's default (no externalized checkpoints: deleted on cancel) and fires too; a contract
#   without a checkpoint section stays silent here.
# custom:
#   id: SW-CKPT-005
#   severity: error
#   remediation: |
#     Set checkpoint.externalized to retain_on_cancellation and
#     execution.checkpointing.externalized-checkpoint-retention to RETAIN_ON_CANCELLATION.
#   example: |
#     checkpoint: {interval: 60s, externalized: delete_on_cancellation}
#     retention: {rollback_window: 3d}
deny contains f if {
	window := _rollback_window
	_has_ckpt
	externalized := object.get(_ckpt, "externalized", null)
	externalized != "retain_on_cancellation"
	f := {
		"rule": "SW-CKPT-005",
		"message": sprintf(
			"checkpoint.externalized is %s but retention.rollback_window is %s: a cancelled job could not be restored; set externalized to retain_on_cancellation",
			[_externalized_text(externalized), lib.fmt_ms(window)],
		),
		"path": "checkpoint.externalized",
		"evidence": {"externalized": externalized, "rollback_window": window},
	}
}
