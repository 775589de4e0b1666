package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-002

test_state002_large_hashmap_state if {
	inp := lib.contract_with({"state": {"backend": "hashmap"}})
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
	inp := lib.contract_with({"state": {"incremental": false}})
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
