# State contract (SW-STATE): the contract side of each rule.
# Repository and live sides of the same ids live in the other state_*.rego files of this package;
# their METADATA stays here, above the first body of each id. SW-STATE-012 and 013 live in
# state_deployment.rego.
package streamwarden.state

import rego.v1

import data.streamwarden.lib

_state := object.get(input.contract, "state", {})

_state_operators := object.get(_state, "operators", [])

# 1 GiB: above this, heap (hashmap) state makes checkpoints and GC pauses too slow (SW-STATE-002).
hashmap_max_bytes := 1073741824

# METADATA
# title: Stateful operators must have stable uids
# description: |
#   Flink maps savepoint state to operators by uid; an operator without one gets a generated id
#   that changes with the job graph, and its state is lost on the next upgrade. Fires for each
#   declared stateful operator (state.operators[]) without a uid, and, when
#   state.auto_generated_uids is forbidden, for each job.sources[] or job.sinks[] without a
#   uid (sources and sinks hold state too: offsets, split enumerators, committers). The
#   repository side fires when auto_generated_uids is forbidden but the deployment does not
#   set pipeline.auto-generate-uids to false.
# custom:
#   id: SW-STATE-001
#   severity: error
#   remediation: |
#     Give every stateful operator, source and sink a uid in the job (.uid("...") or SQL
#     operator uids), declare the same uid in the contract, and set
#     pipeline.auto-generate-uids to false.
#   example: |
#     state:
#       auto_generated_uids: forbidden
#       operators: [{kind: keyed, key: [order_id], ttl: 24h}]   # no uid
deny contains f if {
	some idx, op in _state_operators
	lib.blank(object.get(op, "uid", null))
	f := {
		"rule": "SW-STATE-001",
		"message": sprintf(
			"state.operators[%d] declares state but has no uid: its state cannot be matched on restore; give the operator a uid in the job and declare it here",
			[idx],
		),
		"path": sprintf("state.operators[%d].uid", [idx]),
		"evidence": {"index": idx, "uid": object.get(op, "uid", null), "kind": object.get(op, "kind", null)},
	}
}

# SW-STATE-001: with auto_generated_uids forbidden, sources and sinks need uids too
deny contains f if {
	_state.auto_generated_uids == "forbidden"
	some section in ["sources", "sinks"]
	some idx, item in object.get(input.contract, ["job", section], [])
	lib.blank(object.get(item, "uid", null))
	f := {
		"rule": "SW-STATE-001",
		"message": sprintf(
			"job.%s[%d] (%s) has no uid while state.auto_generated_uids is forbidden: its state (offsets, splits, commits) cannot be matched on restore; declare the uid the job sets",
			[section, idx, object.get(item, "name", "unnamed")],
		),
		"path": sprintf("job.%s[%d].uid", [section, idx]),
		"evidence": {
			"section": section,
			"index": idx,
			"name": object.get(item, "name", null),
			"uid": object.get(item, "uid", null),
			"auto_generated_uids": "forbidden",
		},
	}
}

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

_backend_note := "" if {
	_state.backend
} else := " (state.backend not set: Flink's default)"

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

_incremental_text(x) := "not set (Flink default: false)" if {
	x == null
} else := sprintf("%v", [x])

# The positive SQL state TTL from the deployment files, if any (SW-STATE-003).
_sql_state_ttl := v if {
	input.facts.deployment.available == true
	v := input.facts.deployment.config["table.exec.state.ttl"].value
	lib.positive(v)
}

# METADATA
# title: Keyed state must expire
# description: |
#   Keyed state without a time-to-live grows with every new key and is never cleaned up.
#   Fires for each state.operators[] entry with kind keyed and no positive ttl, unless the
#   deployment files (when they could be read) set a positive table.exec.state.ttl (the SQL
#   state TTL, whose Flink default 0 means never expire).
# custom:
#   id: SW-STATE-003
#   severity: error
#   remediation: |
#     Declare a ttl on the operator (and enable StateTtlConfig on its state descriptors), or,
#     for SQL jobs, set table.exec.state.ttl to a positive duration in the deployment.
#   example: |
#     state:
#       operators: [{uid: orders-dedup, kind: keyed, key: [order_id]}]   # no ttl
deny contains f if {
	some idx, op in _state_operators
	op.kind == "keyed"
	not lib.positive(object.get(op, "ttl", null))
	not _sql_state_ttl
	f := {
		"rule": "SW-STATE-003",
		"message": sprintf(
			"keyed state of operator %s (state.operators[%d]) has %s and the deployment sets no positive table.exec.state.ttl: the state grows forever; declare a ttl such as 24h",
			[lib.quote(object.get(op, "uid", null)), idx, _ttl_text(object.get(op, "ttl", null))],
		),
		"path": sprintf("state.operators[%d].ttl", [idx]),
		"evidence": {
			"uid": object.get(op, "uid", null),
			"ttl": object.get(op, "ttl", null),
			"table.exec.state.ttl": object.get(input, ["facts", "deployment", "config", "table.exec.state.ttl", "value"], null),
			"deployment_available": object.get(input, ["facts", "deployment", "available"], false),
		},
	}
}

_ttl_text(x) := "no ttl" if {
	x == null
} else := sprintf("ttl %s (never expires)", [lib.fmt_ms(x)])

# METADATA
# title: Max parallelism must be pinned
# description: |
#   The max parallelism is the number of key groups keyed state is split into, recorded in every
#   savepoint. When it is set (pipeline.max-parallelism), Flink refuses to restore a savepoint
#   taken with another value. When it is not set, Flink derives one only for a job that starts
#   without state (KeyGroupRangeAssignment: the power of two at or above 1.5 times the
#   parallelism, at least 128 and at most 32768: 128 for any parallelism up to 85, 256 up to
#   171), and a restore keeps the savepoint's value, so a parallelism change alone does not
#   break it. Such a restore breaks when the job is rescaled above the savepoint's max
#   parallelism, or when a max parallelism other than the savepoint's is set later; and the
#   value a fresh start gets depends on the parallelism it happens to start with. Fires when
#   job.max_parallelism is absent or not positive. The repository side fires when the
#   deployment's pipeline.max-parallelism is not the contract's: set to another value (every
#   restore from a savepoint taken with the contract's breaks), or left unset (-1: derived, as
#   above).
# custom:
#   id: SW-STATE-004
#   severity: error
#   remediation: |
#     Declare job.max_parallelism (for example 128, at least the largest parallelism you will
#     ever run; for a job that already runs without one, the max parallelism its savepoints
#     carry, which `streamwarden savepoint inspect` shows) and set pipeline.max-parallelism to
#     the same value; never change it afterwards.
#   example: |
#     job: {name: orders-enrichment, parallelism: 4}   # no max_parallelism
deny contains f if {
	job := object.get(input.contract, "job", {})
	max_par := object.get(job, "max_parallelism", null)
	not lib.positive(max_par)
	f := {
		"rule": "SW-STATE-004",
		"message": sprintf(
			"job.max_parallelism is %s: Flink then derives the max parallelism (the number of key groups) only when the job starts without state (%s) and keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value or when another max parallelism is set later; declare it (for example 128, or the value the job's savepoints carry) and set pipeline.max-parallelism to the same value",
			[_max_par_text(max_par), _derived_text],
		),
		"path": "job.max_parallelism",
		"evidence": {
			"max_parallelism": max_par,
			"parallelism": _job_parallelism,
			"derived_max_parallelism": _job_derived,
		},
	}
}

_max_par_text(x) := "not set" if {
	x == null
} else := sprintf("%v", [x])

_job_parallelism := p if {
	p := input.contract.job.parallelism
	lib.positive(p)
} else := null

_job_derived := lib.derived_max_parallelism(_job_parallelism) if {
	_job_parallelism != null
} else := null

_derived_text := sprintf("%v for job.parallelism %v, the same for any parallelism up to %v", [m, _job_parallelism, lib.derived_up_to(m)]) if {
	m := _job_derived
	m != null
} else := "128 for any parallelism up to 85, more above"

# The compatibility mode: normalization fills in the schema's default (backward); a document built
# by hand may lack it, or hold a value that is none of the modes.
_compatibility := m if {
	m := object.get(input.contract, ["schema_evolution", "compatibility"], "backward")
	is_string(m)
} else := "backward"

# METADATA
# title: Kryo state cannot evolve
# description: |
#   State serialized with Kryo has no schema evolution: any change to the state's classes
#   makes the savepoint unreadable. Fires for each state.operators[] entry with serializer kryo
#   while schema_evolution.compatibility is not none (the contract promises the schema can
#   evolve; an absent compatibility means backward).
# custom:
#   id: SW-STATE-005
#   severity: warning
#   remediation: |
#     Use an evolvable serializer (avro, pojo or rowdata) for the operator's state, or set
#     schema_evolution.compatibility to none if the schema will never change.
#   example: |
#     state: {operators: [{uid: enrich, kind: keyed, serializer: kryo, ttl: 2h}]}
#     schema_evolution: {compatibility: backward}
warn contains f if {
	compatibility := _compatibility
	compatibility != "none"
	some idx, op in _state_operators
	op.serializer == "kryo"
	f := {
		"rule": "SW-STATE-005",
		"message": sprintf(
			"operator %s (state.operators[%d]) uses the kryo serializer while schema_evolution.compatibility is %s: kryo state cannot evolve; use avro, pojo or rowdata",
			[lib.quote(object.get(op, "uid", null)), idx, compatibility],
		),
		"path": sprintf("state.operators[%d].serializer", [idx]),
		"evidence": {"uid": object.get(op, "uid", null), "serializer": "kryo", "compatibility": compatibility},
	}
}
