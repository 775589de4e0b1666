# Tests of the repository side of SW-CKPT-* as a whole (each rule's own cases are beside its
# file). Fixtures (fx_*) are in ../deployment/common_test.rego.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

_dep_t_off := {"execution.checkpointing.interval": dep.fx_default("execution.checkpointing.interval", null)}

test_dep_aligned_deployment_has_no_repository_findings if {
	in1 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(deny)) == 0 with input as in1
	in2 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(warn)) == 0 with input as in2
}

test_dep_repository_rules_quiet_when_facts_unavailable if {
	in3 := dep.fx_unavailable(dep.fx_contract)
	count(dep.fx_deployment_findings(deny)) == 0 with input as in3
	in4 := dep.fx_unavailable(dep.fx_contract)
	count(dep.fx_deployment_findings(warn)) == 0 with input as in4
}
