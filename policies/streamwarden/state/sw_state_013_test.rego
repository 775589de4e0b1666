package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

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
