package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-CKPT-001 (repository side): the deployment does not checkpoint although it must.
deny contains f if {
	some e in dep.settings("execution.checkpointing.interval")
	dep.checkpointing_off(e) # first: the reasons are messages, built only when checkpointing is off
	count(_dep_reasons) > 0
	f := dep.finding(
		"SW-CKPT-001", "execution.checkpointing.interval", e,
		sprintf(
			"checkpointing is off in the deployment: the repository %s, but %s; set execution.checkpointing.interval%s",
			[_dep_interval_says(e), concat(" and ", _dep_reasons), _dep_interval_hint],
		),
		{"interval": e.value, "reasons": _dep_reasons},
	)
}
