package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-CKPT-007 (repository side)
deny contains f if {
	some e in dep.settings("execution.checkpointing.mode")
	e.value == "at_least_once"
	count(exactly_once_sinks) > 0
	f := dep.finding(
		"SW-CKPT-007", "execution.checkpointing.mode", e,
		sprintf("the repository %s, but sinks promise exactly-once delivery (%s): a restore can commit records twice; set it to EXACTLY_ONCE", [dep.repo_says(e, "enum"), concat(", ", exactly_once_sinks)]),
		{"exactly_once_sinks": exactly_once_sinks},
	)
}
