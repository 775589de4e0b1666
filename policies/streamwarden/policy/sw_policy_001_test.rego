package streamwarden.policy

import rego.v1

test_modified_policy_warns if {
	fs := warn with input as {"repository": {"trusted_ref": "main", "policy_changes": [
		{"file": "policies/custom/acme.rego", "change": "modified", "kind": "policy"},
	]}}
	some f in fs
	f.rule == "SW-POLICY-001"
	f.file == "policies/custom/acme.rego"
	contains(f.message, "policy policies/custom/acme.rego is modified")
	contains(f.message, "trusted ref main")
}

test_configuration_change_is_named_as_such if {
	some f in warn with input as {"repository": {"trusted_ref": "main", "policy_changes": [
		{"file": "streamwarden.yaml", "change": "modified", "kind": "configuration"},
	]}}
	startswith(f.message, "configuration streamwarden.yaml")
}

test_one_finding_per_change if {
	count(warn) == 2 with input as {"repository": {"trusted_ref": "main", "policy_changes": [
		{"file": "a.rego", "change": "added", "kind": "policy"},
		{"file": "b.rego", "change": "removed", "kind": "policy"},
	]}}
}

test_no_change_no_finding if {
	count(warn) == 0 with input as {"repository": {"trusted_ref": "main", "policy_changes": []}}
}

test_added_configuration_says_the_defaults_were_used if {
	some f in warn with input as {"repository": {"trusted_ref": "main", "policy_changes": [
		{"file": "streamwarden.yaml", "change": "added", "kind": "configuration"},
	]}}
	contains(f.message, "configuration streamwarden.yaml is added by this pull request")
	contains(f.message, "the trusted ref main has none, so the check used the defaults")
}

test_added_policy_is_judged_by_the_trusted_ref if {
	some f in warn with input as {"repository": {"trusted_ref": "main", "policy_changes": [
		{"file": "policies/custom/new.rego", "change": "added", "kind": "policy"},
	]}}
	contains(f.message, "it was evaluated as committed on the trusted ref main")
	not contains(f.message, "defaults")
}
