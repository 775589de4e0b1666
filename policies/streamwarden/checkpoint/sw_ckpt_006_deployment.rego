package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-CKPT-006 (repository side)
warn contains f if {
	count(_dep_retained_needed) > 0
	needed := max(_dep_retained_needed)
	some e in dep.settings("execution.checkpointing.num-retained")
	e.value < needed
	f := dep.finding(
		"SW-CKPT-006", "execution.checkpointing.num-retained", e,
		sprintf("too few retained checkpoints: the repository %s, but the contract needs at least %v (checkpoint.num_retained, retention.checkpoints.num_retained, or 2 with a rollback window); set it to %v", [dep.repo_says(e, "int"), needed, needed]),
		{"required": needed},
	)
}
