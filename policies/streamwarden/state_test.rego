package streamwarden.state

import rego.v1

import data.streamwarden.lib

# The example contract with `patch` deep-merged into it. Bind `with` values to a local first
# (see checkpoint_test.rego: a regorus 0.13 bug).
_t_with(patch) := {"contract": object.union(lib.example_contract, patch)}

_t_without(paths) := {"contract": json.remove(lib.example_contract, paths)}

# The example's operators, with `patch` merged into operator `idx`.
_t_operator(idx, patch) := {"contract": json.patch(
	lib.example_contract,
	[{"op": "replace", "path": sprintf("/state/operators/%d", [idx]), "value": object.union(lib.example_contract.state.operators[idx], patch)}],
)}

_t_deployment(ttl) := {
	"available": true,
	"configured": true,
	"files": [{"file": "deploy/job.sql", "kind": "sql"}],
	"config": {"table.exec.state.ttl": ttl},
}

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_state_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-STATE-001

test_state001_operator_without_uid if {
	inp := _t_without(["state/operators/1/uid"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-001"
	f.path == "state.operators[1].uid"
	f.evidence == {"index": 1, "uid": null, "kind": "keyed"}
}

test_state001_blank_uid if {
	inp := _t_operator(0, {"uid": "  "})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-STATE-001") == {"state.operators[0].uid"}
}

test_state001_operator_without_uid_fires_even_when_auto_uids_allowed if {
	findings := deny with input as {"contract": {"state": {"auto_generated_uids": "allowed", "operators": [{"kind": "operator"}]}}}
	lib.rule_paths(findings, "SW-STATE-001") == {"state.operators[0].uid"}
}

test_state001_source_and_sink_without_uid_when_forbidden if {
	inp := _t_without(["job/sources/0/uid", "job/sinks/0/uid"])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-STATE-001") == {"job.sources[0].uid", "job.sinks[0].uid"}
	some f in findings
	f.path == "job.sources[0].uid"
	f.evidence.name == "orders-topic"
	contains(f.message, "job.sources[0] (orders-topic) has no uid")
}

test_state001_unnamed_sink_without_uid if {
	findings := deny with input as {"contract": {"state": {"auto_generated_uids": "forbidden"}, "job": {"sinks": [{"delivery": "at_least_once"}]}}}
	some f in findings
	f.path == "job.sinks[0].uid"
	contains(f.message, "(unnamed)")
}

test_state001_source_without_uid_when_auto_uids_allowed_passes if {
	inp := _t_with({"state": {"auto_generated_uids": "allowed"}})
	inp2 := {"contract": json.remove(inp.contract, ["job/sources/0/uid", "job/sinks/0/uid"])}
	findings := deny with input as inp2
	lib.no_rule(findings, "SW-STATE-001")
}

# ---------------------------------------------------------------- SW-STATE-002

test_state002_large_hashmap_state if {
	inp := _t_with({"state": {"backend": "hashmap"}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-STATE-002"
	f.path == "state.backend"
	f.evidence == {"backend": "hashmap", "effective_backend": "hashmap", "max_size": 53687091200, "limit": 1073741824}
	contains(f.message, "state.max_size is 50GiB with the hashmap backend: heap state above 1GiB")
}

test_state002_hashmap_just_above_one_gib_fires if {
	findings := warn with input as {"contract": {"state": {"backend": "hashmap", "max_size": 1073741825}}}
	lib.rule_paths(findings, "SW-STATE-002") == {"state.backend"}
}

test_state002_hashmap_exactly_one_gib_passes if {
	findings := warn with input as {"contract": {"state": {"backend": "hashmap", "max_size": 1073741824}}}
	lib.no_rule(findings, "SW-STATE-002")
}

test_state002_absent_backend_is_hashmap if {
	findings := warn with input as {"contract": {"state": {"max_size": 2147483648}}}
	some f in findings
	f.rule == "SW-STATE-002"
	f.path == "state.backend"
	f.evidence.backend == null
	contains(f.message, "(state.backend not set: Flink's default)")
}

test_state002_hashmap_without_max_size_passes if {
	findings := warn with input as {"contract": {"state": {"backend": "hashmap"}}}
	lib.no_rule(findings, "SW-STATE-002")
}

test_state002_rocksdb_without_incremental if {
	inp := _t_with({"state": {"incremental": false}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-STATE-002"
	f.path == "state.incremental"
	f.evidence == {"backend": "rocksdb", "incremental": false}
}

test_state002_forst_with_absent_incremental if {
	findings := warn with input as {"contract": {"state": {"backend": "forst"}}}
	some f in findings
	f.rule == "SW-STATE-002"
	f.path == "state.incremental"
	f.evidence.incremental == null
	contains(f.message, "not set (Flink default: false)")
}

test_state002_large_rocksdb_incremental_passes if {
	findings := warn with input as {"contract": {"state": {"backend": "rocksdb", "incremental": true, "max_size": 1099511627776}}}
	lib.no_rule(findings, "SW-STATE-002")
}

test_state002_is_a_warning if {
	findings := deny with input as {"contract": {"state": {"backend": "hashmap", "max_size": 1099511627776}}}
	lib.no_rule(findings, "SW-STATE-002")
}

# ---------------------------------------------------------------- SW-STATE-003

test_state003_keyed_without_ttl if {
	inp := _t_without(["state/operators/0/ttl"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-003"
	f.path == "state.operators[0].ttl"
	f.evidence == {"uid": "orders-dedup", "ttl": null, "table.exec.state.ttl": null, "deployment_available": false}
	contains(f.message, `keyed state of operator "orders-dedup" (state.operators[0]) has no ttl`)
}

test_state003_zero_ttl_never_expires if {
	inp := _t_operator(1, {"ttl": 0})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-003"
	f.path == "state.operators[1].ttl"
	contains(f.message, "ttl 0s (never expires)")
}

test_state003_smallest_ttl_passes if {
	inp := _t_operator(1, {"ttl": 1})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-003")
}

test_state003_operator_state_without_ttl_passes if {
	findings := deny with input as {"contract": {"state": {"operators": [{"uid": "enum", "kind": "operator"}, {"uid": "rules", "kind": "broadcast"}]}}}
	lib.no_rule(findings, "SW-STATE-003")
}

test_state003_positive_sql_ttl_in_deployment_passes if {
	contract := json.remove(lib.example_contract, ["state/operators/0/ttl"])
	dep := _t_deployment({"value": 86400000, "raw": "1 d", "key": "table.exec.state.ttl", "file": "deploy/job.sql", "line": 3, "kind": "sql", "default": false})
	findings := deny with input as {"contract": contract, "facts": {"deployment": dep}}
	lib.no_rule(findings, "SW-STATE-003")
}

test_state003_default_sql_ttl_does_not_count if {
	contract := json.remove(lib.example_contract, ["state/operators/0/ttl"])
	dep := _t_deployment({"value": 0, "default": true, "file": null, "line": null, "raw": null, "key": "table.exec.state.ttl"})
	findings := deny with input as {"contract": contract, "facts": {"deployment": dep}}
	some f in findings
	f.rule == "SW-STATE-003"
	f.evidence["table.exec.state.ttl"] == 0
	f.evidence.deployment_available == true
}

test_state003_sql_ttl_of_unavailable_deployment_does_not_count if {
	contract := json.remove(lib.example_contract, ["state/operators/0/ttl"])
	dep := object.union(_t_deployment({"value": 86400000}), {"available": false, "error": "unreadable"})
	findings := deny with input as {"contract": contract, "facts": {"deployment": dep}}
	lib.rule_paths(findings, "SW-STATE-003") == {"state.operators[0].ttl"}
}

# ---------------------------------------------------------------- SW-STATE-004

test_state004_max_parallelism_absent if {
	inp := _t_without(["job/max_parallelism"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	f.path == "job.max_parallelism"
	f.evidence == {"max_parallelism": null, "parallelism": 4, "derived_max_parallelism": 128}
	contains(f.message, "job.max_parallelism is not set: Flink then derives the max parallelism (the number of key groups) only when the job starts without state (128 for job.parallelism 4, the same for any parallelism up to 85) and keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value or when another max parallelism is set later")
	not contains(f.message, "breaks every restore")
}

test_state004_derived_value_for_a_larger_parallelism if {
	inp := _t_with({"job": {"max_parallelism": null, "parallelism": 100}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	f.evidence.derived_max_parallelism == 256
	contains(f.message, "(256 for job.parallelism 100, the same for any parallelism up to 171)")
}

test_state004_without_a_parallelism if {
	inp := _t_without(["job/max_parallelism", "job/parallelism"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	f.evidence == {"max_parallelism": null, "parallelism": null, "derived_max_parallelism": null}
	contains(f.message, "(128 for any parallelism up to 85, more above)")
}

test_state004_max_parallelism_auto if {
	inp := _t_with({"job": {"max_parallelism": -1}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	contains(f.message, "job.max_parallelism is -1")
}

test_state004_max_parallelism_one_passes if {
	inp := _t_with({"job": {"max_parallelism": 1}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-004")
}

test_state004_without_job_section if {
	findings := deny with input as {"contract": {}}
	lib.rule_paths(findings, "SW-STATE-004") == {"job.max_parallelism"}
}

# ---------------------------------------------------------------- SW-STATE-005

test_state005_kryo_with_full_compatibility if {
	inp := _t_operator(1, {"serializer": "kryo"})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-STATE-005"
	f.path == "state.operators[1].serializer"
	f.evidence == {"uid": "orders-enrich-join", "serializer": "kryo", "compatibility": "full"}
}

test_state005_kryo_with_backward_transitive if {
	findings := warn with input as {"contract": {
		"state": {"operators": [{"uid": "a", "serializer": "avro"}, {"uid": "b", "serializer": "kryo"}]},
		"schema_evolution": {"compatibility": "backward_transitive"},
	}}
	lib.rule_paths(findings, "SW-STATE-005") == {"state.operators[1].serializer"}
}

test_state005_kryo_with_compatibility_none_passes if {
	findings := warn with input as {"contract": {
		"state": {"operators": [{"uid": "b", "serializer": "kryo"}]},
		"schema_evolution": {"compatibility": "none"},
	}}
	lib.no_rule(findings, "SW-STATE-005")
}

test_state005_kryo_without_schema_evolution_is_under_the_default_backward if {
	findings := warn with input as {"contract": {"state": {"operators": [{"uid": "b", "serializer": "kryo"}]}}}
	some f in findings
	f.rule == "SW-STATE-005"
	f.evidence.compatibility == "backward"
	# a compatibility that is none of the modes reads as the default too
	odd := warn with input as {"contract": {"state": {"operators": [{"uid": "b", "serializer": "kryo"}]}, "schema_evolution": {"compatibility": 3}}}
	lib.rule_paths(odd, "SW-STATE-005") == {"state.operators[0].serializer"}
}
