# A pipeline whose contract a pull request deletes. Evaluated once per removed contract with
# input.contract null and input.base.contract the deleted contract (see run.py).
package streamwarden.removal

import rego.v1

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: A contract must not be deleted while its table has consumers
# description: |
#   The pull request deletes the contract of a pipeline whose table still has declared consumers
#   (`metadata.consumers` at the base). Consumers keep reading the table after the contract is
#   gone: nothing promises its schema, freshness or retention any more, and a later change breaks
#   them without a review. This is the removal of every field at once, so it is breaking under
#   every compatibility mode.
# custom:
#   id: SW-SCHEMA-011
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the contract until every consumer has moved off the table (remove them from
#     `metadata.consumers` in an earlier pull request, after telling them), or rename the file
#     while keeping `metadata.name` so the contract still pairs.
#   example: |
#     # base: contracts/orders.yaml with metadata.consumers: [{name: finance-dashboard, ...}]
#     # head: the file is deleted
deny contains f if {
	input.base.status == "removed"
	old := input.base.contract
	consumers := [c.name | some c in object.get(old.metadata, "consumers", []); is_string(c.name)]
	count(consumers) > 0
	f := {
		"rule": "SW-SCHEMA-011",
		"message": sprintf(
			"the contract of pipeline %q (table %v) is deleted while consumers still read it: %v; tell them and remove them from metadata.consumers first",
			[old.metadata.name, object.get(object.get(old, "table", {}), "identifier", "unknown"), concat(", ", consumers)],
		),
		"path": "metadata.consumers",
		"file": input.base.file,
		"line": 1,
		"source": "diff",
		"value": old.metadata.name,
		"evidence": {"pipeline": old.metadata.name, "consumers": consumers, "base_file": input.base.file},
	}
}
