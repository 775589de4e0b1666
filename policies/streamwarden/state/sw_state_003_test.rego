package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-003

test_state003_keyed_without_ttl if {
	inp := lib.contract_without(["state/operators/0/ttl"])
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
