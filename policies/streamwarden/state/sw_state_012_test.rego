package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

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
