package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# title: The state backend must fit the state size
# description: |
#   Fires when state.max_size is above 1GiB (equal is fine) with the hashmap backend (heap
#   state: full snapshots on every checkpoint, long GC pauses, OOM risk); an absent
#   state.backend counts as Flink's default, hashmap. Also fires for the rocksdb or forst
#   backend without incremental checkpoints (state.incremental false or absent: Flink's default
#   uploads the whole state on every checkpoint). The repository and live sides check the
#   deployed backend and incremental setting.
# custom:
#   id: SW-STATE-002
#   severity: warning
#   remediation: |
#     Use backend rocksdb (or forst) with incremental true for state above 1GiB, and set
#     state.backend.type and execution.checkpointing.incremental accordingly.
#   example: |
#     state: {backend: hashmap, max_size: 50GiB}
warn contains f if {
	max_size := _state.max_size
	is_number(max_size)
	max_size > hashmap_max_bytes
	backend := object.get(_state, "backend", "hashmap")
	backend == "hashmap"
	f := {
		"rule": "SW-STATE-002",
		"message": sprintf(
			"state.max_size is %s with the hashmap backend%s: heap state above %s makes checkpoints and GC pauses slow; use rocksdb with incremental checkpoints",
			[lib.fmt_bytes(max_size), _backend_note, lib.fmt_bytes(hashmap_max_bytes)],
		),
		"path": "state.backend",
		"evidence": {
			"backend": object.get(_state, "backend", null),
			"effective_backend": "hashmap",
			"max_size": max_size,
			"limit": hashmap_max_bytes,
		},
	}
}

# SW-STATE-002: rocksdb/forst without incremental checkpoints
warn contains f if {
	backend := _state.backend
	backend in {"rocksdb", "forst"}
	incremental := object.get(_state, "incremental", null)
	incremental != true
	f := {
		"rule": "SW-STATE-002",
		"message": sprintf(
			"state.backend is %s but state.incremental is %s: every checkpoint uploads the full state; set incremental to true",
			[backend, _incremental_text(incremental)],
		),
		"path": "state.incremental",
		"evidence": {"backend": backend, "incremental": incremental},
	}
}
