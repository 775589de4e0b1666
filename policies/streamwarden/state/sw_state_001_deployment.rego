package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-STATE-001 (repository side): uids must not be generated, but the deployment allows it.
deny contains f if {
	input.contract.state.auto_generated_uids == "forbidden"
	some e in dep.settings("pipeline.auto-generate-uids")
	e.value != false
	f := dep.finding(
		"SW-STATE-001", "pipeline.auto-generate-uids", e,
		sprintf("the contract forbids generated operator uids (state.auto_generated_uids: forbidden) but the repository %s, so an operator without a uid silently gets a generated one; set pipeline.auto-generate-uids to false", [dep.repo_says(e, "bool")]),
		{"auto_generated_uids": "forbidden"},
	)
}
