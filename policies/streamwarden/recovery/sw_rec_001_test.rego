package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-REC-001

test_rec001_owner_missing if {
	inp := lib.contract_without(["metadata/owner"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-REC-001"
	f.path == "metadata.owner"
	f.evidence == {"owner": null}
}

test_rec001_owner_empty_or_whitespace if {
	inp_empty := lib.contract_with({"metadata": {"owner": ""}})
	findings_empty := deny with input as inp_empty
	lib.rule_paths(findings_empty, "SW-REC-001") == {"metadata.owner"}
	inp_space := lib.contract_with({"metadata": {"owner": " \t "}})
	findings_space := deny with input as inp_space
	lib.rule_paths(findings_space, "SW-REC-001") == {"metadata.owner"}
}

test_rec001_without_metadata_section if {
	findings := deny with input as {"contract": {"job": {"name": "j"}}}
	lib.rule_paths(findings, "SW-REC-001") == {"metadata.owner"}
}

test_rec001_one_finding_per_consumer_without_contact if {
	findings := deny with input as {"contract": {"metadata": {"owner": "payments-data", "consumers": [
		{"name": "finance-dashboard", "contact": "#finance-data"},
		{"name": "fraud-features"},
		{"name": "ops", "contact": "  "},
	]}}}
	lib.rule_paths(findings, "SW-REC-001") == {"metadata.consumers[1].contact", "metadata.consumers[2].contact"}
	some f in findings
	f.path == "metadata.consumers[1].contact"
	f.evidence == {"consumer": "fraud-features", "contact": null}
	contains(f.message, `consumer "fraud-features" (metadata.consumers[1]) has no contact`)
}

test_rec001_owner_with_surrounding_spaces_passes if {
	findings := deny with input as {"contract": {"metadata": {"owner": " payments-data "}}}
	lib.no_rule(findings, "SW-REC-001")
}
