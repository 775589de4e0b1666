package streamwarden.deployment

import rego.v1

# METADATA
# custom:
#   requires: [facts.deployment]

# METADATA
# title: The deployed state backend and checkpoint location must match the contract
# description: |
#   Fires when the deployment's effective state.backend.type (Flink's default hashmap when
#   unset) differs from the contract's state.backend, or its execution.checkpointing.dir differs
#   from the contract's checkpoint.storage (compared without a trailing slash; a missing or
#   non-durable directory is SW-CKPT-004's). The contract is then a false description of the
#   job. The other checkpoint settings are SW-CKPT-003's.
# custom:
#   id: SW-DEPLOY-005
#   severity: error
#   remediation: |
#     Make the deployment match the contract (state.backend.type, execution.checkpointing.dir),
#     or change the contract if the deployment is right.
#   example: |
#     state: {backend: rocksdb}            # contract
#     state.backend.type: hashmap          # flinkConfiguration
deny contains f if {
	want := input.contract.state.backend
	some e in settings("state.backend.type")
	backend_family(e.value) != want
	f := finding(
		"SW-DEPLOY-005", "state.backend.type", e,
		sprintf("the state backend differs from the contract: the contract says %s (state.backend) but the repository %s", [want, repo_says(e, "name")]),
		{"contract": want, "contract_field": "state.backend"},
	)
}

# SW-DEPLOY-005: checkpoint location
deny contains f if {
	want := input.contract.checkpoint.storage
	is_string(want)
	some e in settings("execution.checkpointing.dir")
	is_string(e.value)
	not nondurable(e.value)
	not same_location(want, e.value)
	f := finding(
		"SW-DEPLOY-005", "execution.checkpointing.dir", e,
		sprintf("the checkpoint location differs from the contract: the contract says %s (checkpoint.storage) but the repository %s", [want, repo_says(e, "string")]),
		{"contract": want, "contract_field": "checkpoint.storage"},
	)
}
