package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Every pipeline has an owner and reachable consumers
# description: |
#   In an incident someone must answer for the pipeline and every consumer must be told.
#   Fires when metadata.owner is missing, empty or only whitespace, and once for each
#   metadata.consumers[] entry without a contact (missing, empty or only whitespace).
# custom:
#   id: SW-REC-001
#   severity: error
#   remediation: |
#     Set metadata.owner to the team that answers for the pipeline, and give every consumer a
#     contact (a channel or an e-mail address).
#   example: |
#     metadata:
#       name: orders-enrichment
#       consumers: [{name: finance-dashboard, freshness: 30m}]   # no owner, no contact
deny contains f if {
	owner := object.get(_metadata, "owner", null)
	lib.blank(owner)
	f := {
		"rule": "SW-REC-001",
		"message": "metadata.owner is missing or empty: nobody answers for this pipeline in an incident; set it to the owning team",
		"path": "metadata.owner",
		"evidence": {"owner": owner},
	}
}

# SW-REC-001: consumer without contact
deny contains f if {
	some idx, consumer in object.get(_metadata, "consumers", [])
	contact := object.get(consumer, "contact", null)
	lib.blank(contact)
	f := {
		"rule": "SW-REC-001",
		"message": sprintf(
			"consumer %s (metadata.consumers[%d]) has no contact: it cannot be told about an incident or a breaking change; add a contact",
			[lib.quote(object.get(consumer, "name", null)), idx],
		),
		"path": sprintf("metadata.consumers[%d].contact", [idx]),
		"evidence": {"consumer": object.get(consumer, "name", null), "contact": contact},
	}
}
