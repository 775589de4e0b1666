package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-CKPT-005 (repository side)
deny contains f if {
	some e in dep.settings("execution.checkpointing.externalized-checkpoint-retention")
	e.value != "retain_on_cancellation"
	count(_dep_retain_reasons) > 0
	reasons := sort([r | some r in _dep_retain_reasons])
	f := dep.finding(
		"SW-CKPT-005", "execution.checkpointing.externalized-checkpoint-retention", e,
		sprintf("checkpoints are not retained on cancel: the repository %s, but %s, so a cancelled job must stay restorable; set it to RETAIN_ON_CANCELLATION", [dep.repo_says(e, "enum"), concat(" and ", reasons)]),
		{"reasons": reasons},
	)
}
