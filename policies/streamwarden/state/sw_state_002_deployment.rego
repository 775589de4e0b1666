package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep
import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-STATE-002 (repository side): large state on the heap backend. Where the contract names a
# different backend, SW-DEPLOY-005 reports the mismatch instead.
warn contains f if {
	max_size := input.contract.state.max_size
	is_number(max_size)
	max_size > hashmap_max_bytes
	some e in dep.settings("state.backend.type")
	dep.backend_family(e.value) == "hashmap"
	object.get(input.contract.state, "backend", "hashmap") == "hashmap"
	f := dep.finding(
		"SW-STATE-002", "state.backend.type", e,
		sprintf("state.max_size is %s but the repository %s: heap state above %s makes checkpoints and GC pauses slow; use rocksdb with incremental checkpoints", [lib.fmt_bytes(max_size), dep.repo_says(e, "name"), lib.fmt_bytes(hashmap_max_bytes)]),
		{"max_size": max_size, "limit": hashmap_max_bytes},
	)
}

# SW-STATE-002 (repository side): rocksdb/forst without incremental checkpoints.
warn contains f if {
	is_object(input.contract.state)
	some v in data.streamwarden.deployment.views
	backend := v["state.backend.type"]
	backend.value in {"rocksdb", "forst"}
	e := v["execution.checkpointing.incremental"]
	e.value == false
	f := dep.finding(
		"SW-STATE-002", "execution.checkpointing.incremental", e,
		sprintf("the deployment uses the %s backend (%s) but the repository %s: every checkpoint uploads the full state; set execution.checkpointing.incremental to true", [backend.value, dep.origin(backend), dep.repo_says(e, "bool")]),
		{"backend": backend.value},
	)
}
