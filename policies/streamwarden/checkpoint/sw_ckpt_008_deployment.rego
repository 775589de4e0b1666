package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-CKPT-008 (repository side): unlimited, or above the contract's tolerable_failures.
warn contains f if {
	some e in dep.settings("execution.checkpointing.tolerable-failed-checkpoints")
	why := _dep_tolerable_excess(e.value)
	f := dep.finding(
		"SW-CKPT-008", "execution.checkpointing.tolerable-failed-checkpoints", e,
		sprintf("checkpoint failures can go unnoticed: the repository %s, %s", [dep.repo_says(e, "int"), why]),
		{"contract": object.get(input.contract, ["checkpoint", "tolerable_failures"], null)},
	)
}
