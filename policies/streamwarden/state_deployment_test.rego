# Tests of state_deployment.rego: the repository side of SW-STATE-001, 002, 004, 012 and 013.
# Fixtures (fx_*) are in deployment_test.rego.
package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

test_dep_state_aligned_deployment_is_quiet if {
	in1 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(deny)) == 0 with input as in1
	in2 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(warn)) == 0 with input as in2
}

# --- SW-STATE-001 --------------------------------------------------------------------------------

test_dep_state_001_generated_uids_by_default if {
	key := "pipeline.auto-generate-uids"
	in3 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, true)})
	fs := deny with input as in3
	[f] := dep.fx_of("SW-STATE-001", fs)
	f.line == 7
	f.path == key
	contains(f.message, "leaves pipeline.auto-generate-uids unset, so Flink uses its default true")
}

test_dep_state_001_generated_uids_set_explicitly if {
	key := "pipeline.auto-generate-uids"
	in4 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, true, 23)})
	fs := deny with input as in4
	[f] := dep.fx_of("SW-STATE-001", fs)
	f.line == 23
}

test_dep_state_001_quiet_when_uids_are_allowed if {
	key := "pipeline.auto-generate-uids"
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/state/auto_generated_uids", "value": "allowed"}])
	in5 := dep.fx_input(contract, {key: dep.fx_default(key, true)})
	count(dep.fx_of("SW-STATE-001", deny)) == 0 with input as in5
}

# --- SW-STATE-002 --------------------------------------------------------------------------------

_dep_t_heap := json.patch(dep.fx_contract, [{"op": "remove", "path": "/state/backend"}])

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

# --- SW-STATE-004 --------------------------------------------------------------------------------

test_dep_state_004_max_parallelism_differs if {
	in13 := dep.fx_input(dep.fx_contract, {"pipeline.max-parallelism": dep.fx_set("pipeline.max-parallelism", 256, 22)})
	fs := deny with input as in13
	[f] := dep.fx_of("SW-STATE-004", fs)
	f.line == 22
	f.value == 256
	f.evidence.derived_max_parallelism == null
	contains(f.message, "pins job.max_parallelism to 128 but the repository sets pipeline.max-parallelism to 256")
	contains(f.message, "every restore from a savepoint taken with 128 breaks")
}

test_dep_state_004_unset_derives_from_parallelism if {
	key := "pipeline.max-parallelism"
	in14 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, -1), "parallelism.default": dep.fx_set("spec.job.parallelism", 100, 30)})
	fs := deny with input as in14
	[f] := dep.fx_of("SW-STATE-004", fs)
	f.line == 7
	f.evidence.derived_max_parallelism == 256
	f.evidence.parallelism == 100
	contains(f.message, "the max parallelism is not pinned where the job runs")
	contains(f.message, "derives one only when the job starts without state (256 for parallelism 100, the same up to parallelism 171, not the contract's 128) and keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value")
	not contains(f.message, "breaks every restore")
}

test_dep_state_004_unset_with_contract_parallelism if {
	# the derived value is the contract's today, but only while the job starts at parallelism 85 or less
	key := "pipeline.max-parallelism"
	in15 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, -1)})
	fs := deny with input as in15
	[f] := dep.fx_of("SW-STATE-004", fs)
	f.evidence.derived_max_parallelism == 128
	contains(f.message, "(128 for parallelism 4, the same up to parallelism 85)")
}

test_dep_state_004_unset_without_any_parallelism if {
	key := "pipeline.max-parallelism"
	contract := json.remove(dep.fx_contract, ["job/parallelism"])
	in16 := dep.fx_input(contract, {key: dep.fx_set(key, -1, 22)})
	fs := deny with input as in16
	[f] := dep.fx_of("SW-STATE-004", fs)
	f.line == 22
	f.evidence.derived_max_parallelism == null
	contains(f.message, "sets pipeline.max-parallelism to -1 at deploy/fd.yaml:22, so Flink derives one only when the job starts without state (128 for any parallelism up to 85, more above)")
}

test_dep_state_004_quiet_when_the_contract_does_not_pin_it if {
	contract := json.remove(dep.fx_contract, ["job/max_parallelism"])
	in17 := dep.fx_input(contract, {"pipeline.max-parallelism": dep.fx_set("pipeline.max-parallelism", 256, 22)})
	fs := deny with input as in17
	count(dep.fx_of("SW-STATE-004", fs)) == 0
}

# --- SW-STATE-012 --------------------------------------------------------------------------------

_dep_t_ignore := "execution.state-recovery.ignore-unclaimed-state"

test_dep_state_012_cr_allow_non_restored_state if {
	e := dep.fx_set("spec.job.allowNonRestoredState", true, 44)
	in18 := dep.fx_input(dep.fx_contract, {_dep_t_ignore: e})
	fs := deny with input as in18
	[f] := dep.fx_of("SW-STATE-012", fs)
	f.line == 44
	f.path == _dep_t_ignore
	contains(f.message, "sets spec.job.allowNonRestoredState (Flink's execution.state-recovery.ignore-unclaimed-state) to true at deploy/fd.yaml:44")
}

test_dep_state_012_absent_contract_field_counts_as_false if {
	contract := json.remove(dep.fx_contract, ["state/allow_non_restored_state"])
	in19 := dep.fx_input(contract, {_dep_t_ignore: dep.fx_set("execution.savepoint.ignore-unclaimed-state", true, 9)})
	fs := deny with input as in19
	[f] := dep.fx_of("SW-STATE-012", fs)
	contains(f.message, "allow_non_restored_state is not set")
}

test_dep_state_012_quiet_when_allowed_or_false if {
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/state/allow_non_restored_state", "value": true}])
	in20 := dep.fx_input(contract, {_dep_t_ignore: dep.fx_set(_dep_t_ignore, true, 9)})
	count(dep.fx_of("SW-STATE-012", deny)) == 0 with input as in20
	in21 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_of("SW-STATE-012", deny)) == 0 with input as in21
	in22 := dep.fx_input(dep.fx_stateless, {_dep_t_ignore: dep.fx_set(_dep_t_ignore, true, 9)})
	count(dep.fx_of("SW-STATE-012", deny)) == 0 with input as in22
}

# --- SW-STATE-013 --------------------------------------------------------------------------------

_dep_t_mode(value, line) := {"job": {"upgrade_mode": object.union(dep.fx_set("spec.job.upgradeMode", value, line), {"raw": "stateless"})}}

# The Kubernetes operator's default: spec.job sets no upgradeMode (provenance: the spec.job line).
_dep_t_mode_default := {"job": {"upgrade_mode": object.union(dep.fx_set("spec.job.upgradeMode", "stateless", 51), {"raw": null, "default": true})}}

test_dep_state_013_stateless_upgrade_of_a_stateful_pipeline if {
	in23 := dep.fx_facts_input(dep.fx_contract, _dep_t_mode("stateless", 58))
	fs := deny with input as in23
	[f] := dep.fx_of("SW-STATE-013", fs)
	f.line == 58
	f.file == "deploy/fd.yaml"
	f.path == "spec.job.upgradeMode"
	f.value == "stateless"
	startswith(f.message, "the repository sets spec.job.upgradeMode to stateless at deploy/fd.yaml:58: ")
	contains(f.message, "restores nothing, but the pipeline keeps state: 1 state operator under state.operators (orders-dedup); exactly-once sinks (orders-table)")
	f.evidence.operator_default == false
	count(f.evidence.keeps_state) == 2
}

test_dep_state_013_the_operators_default_is_stateless if {
	in24 := dep.fx_facts_input(dep.fx_contract, _dep_t_mode_default)
	fs := deny with input as in24
	[f] := dep.fx_of("SW-STATE-013", fs)
	f.line == 51
	contains(f.message, "the repository's Flink resource at deploy/fd.yaml:51 sets no spec.job.upgradeMode, so the Kubernetes operator uses its default, stateless")
	f.evidence.operator_default == true
}

test_dep_state_013_savepoint_and_last_state_are_quiet if {
	in25 := dep.fx_facts_input(dep.fx_contract, _dep_t_mode("savepoint", 58))
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in25
	in26 := dep.fx_facts_input(dep.fx_contract, _dep_t_mode("last_state", 58))
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in26
}

test_dep_state_013_either_kind_of_state_is_enough if {
	sink_only := json.remove(dep.fx_contract, ["state/operators"])
	in27 := dep.fx_facts_input(sink_only, _dep_t_mode("stateless", 58))
	[f] := dep.fx_of("SW-STATE-013", deny) with input as in27
	f.evidence.keeps_state == ["exactly-once sinks (orders-table), whose pending commits live in the checkpoint"]
	ops_only := json.patch(dep.fx_contract, [
		{"op": "replace", "path": "/job/sinks/0/delivery", "value": "at_least_once"},
		{"op": "add", "path": "/state/operators/-", "value": {"kind": "operator"}},
	])
	in28 := dep.fx_facts_input(ops_only, _dep_t_mode("stateless", 58))
	[g] := dep.fx_of("SW-STATE-013", deny) with input as in28
	g.evidence.keeps_state == ["2 state operators under state.operators (orders-dedup, state.operators[1])"]
}

test_dep_state_013_quiet_for_a_pipeline_without_state if {
	in29 := dep.fx_facts_input(dep.fx_stateless, _dep_t_mode("stateless", 58))
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in29
	no_ops := json.patch(dep.fx_stateless, [{"op": "add", "path": "/state", "value": {"operators": []}}])
	in30 := dep.fx_facts_input(no_ops, _dep_t_mode("stateless", 58))
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in30
}

test_dep_state_013_quiet_without_a_usable_upgrade_mode if {
	# a config.yaml or SQL alone: no Flink resource, no upgrade mode
	in31 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in31
	# an upgradeMode that does not parse (SW-DEPLOY-003's) or a placeholder: nothing to judge
	bad := {"job": {"upgrade_mode": object.union(dep.fx_set("spec.job.upgradeMode", null, 58), {"error": "not one of STATELESS, SAVEPOINT, LAST_STATE"})}}
	in32 := dep.fx_facts_input(dep.fx_contract, bad)
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in32
	# the deployment files could not be read
	in33 := dep.fx_unavailable(dep.fx_contract)
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as in33
}

test_dep_state_013_pull_request_that_drops_the_state_declarations if {
	head := dep.fx_stateless
	base := {"status": "present", "ref": "main", "contract": dep.fx_contract}
	in34 := object.union(dep.fx_facts_input(head, _dep_t_mode("stateless", 58)), {"base": base})
	[f] := dep.fx_of("SW-STATE-013", deny) with input as in34
	contains(f.message, "the pipeline keeps state in the base (main), and this pull request removes it from the contract: 1 state operator under state.operators (orders-dedup)")
	# a contract the pull request adds, or a base without state: nothing was kept
	added := object.union(dep.fx_facts_input(head, _dep_t_mode("stateless", 58)), {"base": {"status": "added", "contract": null}})
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as added
	plain := object.union(dep.fx_facts_input(head, _dep_t_mode("stateless", 58)), {"base": {"status": "present", "contract": dep.fx_stateless}})
	count(dep.fx_of("SW-STATE-013", deny)) == 0 with input as plain
}
