package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

test_dep_state_002_large_state_on_the_default_heap_backend if {
	in6 := dep.fx_input(_dep_t_heap, {"state.backend.type": dep.fx_default("state.backend.type", "hashmap")})
	fs := warn with input as in6
	[f] := dep.fx_of("SW-STATE-002", fs)
	f.path == "state.backend.type"
	f.line == 7
	contains(f.message, "state.max_size is 50GiB")
}

test_dep_state_002_legacy_heap_backend_name if {
	in7 := dep.fx_input(_dep_t_heap, {"state.backend.type": dep.fx_set("state.backend", "filesystem", 21)})
	fs := warn with input as in7
	[f] := dep.fx_of("SW-STATE-002", fs)
	f.line == 21
}

test_dep_state_002_one_gib_is_fine if {
	contract := json.patch(_dep_t_heap, [{"op": "replace", "path": "/state/max_size", "value": 1073741824}])
	in8 := dep.fx_input(contract, {"state.backend.type": dep.fx_default("state.backend.type", "hashmap")})
	count(dep.fx_of("SW-STATE-002", warn)) == 0 with input as in8
}

test_dep_state_002_backend_mismatch_is_left_to_deploy_005 if {
	in9 := dep.fx_input(dep.fx_contract, {"state.backend.type": dep.fx_set("state.backend.type", "hashmap", 21)})
	count(dep.fx_of("SW-STATE-002", warn)) == 0 with input as in9
}

test_dep_state_002_rocksdb_without_incremental if {
	key := "execution.checkpointing.incremental"
	in10 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, false)})
	fs := warn with input as in10
	[f] := dep.fx_of("SW-STATE-002", fs)
	f.path == key
	f.line == 7
	contains(f.message, "rocksdb backend (deploy/fd.yaml:21 (state.backend.type))")
}

test_dep_state_002_forst_incremental_set_false if {
	key := "execution.checkpointing.incremental"
	overrides := {"state.backend.type": dep.fx_set("state.backend.type", "forst", 21), key: dep.fx_set("state.backend.incremental", false, 18)}
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/state/backend", "value": "forst"}])
	in11 := dep.fx_input(contract, overrides)
	fs := warn with input as in11
	[f] := dep.fx_of("SW-STATE-002", fs)
	f.line == 18
}

test_dep_state_002_quiet_without_a_state_section if {
	key := "execution.checkpointing.incremental"
	in12 := dep.fx_input(dep.fx_stateless, {key: dep.fx_default(key, false)})
	count(dep.fx_of("SW-STATE-002", warn)) == 0 with input as in12
}
