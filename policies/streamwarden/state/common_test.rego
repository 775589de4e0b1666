package streamwarden.state

import rego.v1

import data.streamwarden.lib

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
