# Tests of the repository side of SW-STATE-* as a whole (each rule's own cases are beside its
# file). Fixtures (fx_*) are in ../deployment/common_test.rego.
package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

test_dep_state_aligned_deployment_is_quiet if {
	in1 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(deny)) == 0 with input as in1
	in2 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(warn)) == 0 with input as in2
}

# --- SW-STATE-002 --------------------------------------------------------------------------------

_dep_t_heap := json.patch(dep.fx_contract, [{"op": "remove", "path": "/state/backend"}])

# --- SW-STATE-012 --------------------------------------------------------------------------------

_dep_t_ignore := "execution.state-recovery.ignore-unclaimed-state"

# --- SW-STATE-013 --------------------------------------------------------------------------------

_dep_t_mode(value, line) := {"job": {"upgrade_mode": object.union(dep.fx_set("spec.job.upgradeMode", value, line), {"raw": "stateless"})}}

# The Kubernetes operator's default: spec.job sets no upgradeMode (provenance: the spec.job line).
_dep_t_mode_default := {"job": {"upgrade_mode": object.union(dep.fx_set("spec.job.upgradeMode", "stateless", 51), {"raw": null, "default": true})}}
