package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

# The example contract at base; head is the example with `patch` deep-merged into it.
_td_in(patch) := {
	"contract": object.union(lib.example_contract, patch),
	"base": lib.base_doc(lib.example_contract),
}

# The example's operators with operator `idx` replaced by `op` (head only).
_td_ops(idx, op) := json.patch(lib.example_contract.state.operators, [{"op": "replace", "path": sprintf("/%d", [idx]), "value": op}])

_td_op_in(idx, patch) := _td_in({"state": {"operators": _td_ops(idx, object.union(lib.example_contract.state.operators[idx], patch))}})

_td_diff_rules := {"SW-STATE-006", "SW-STATE-007", "SW-STATE-008"}

_td_diff_findings(findings) := {f | some f in findings; f.rule in _td_diff_rules}

# A head that breaks SW-STATE-006, 007 and 008 against the example.
_td_breaking := {
	"job": {"max_parallelism": 256, "sources": [], "sinks": []},
	"state": {"operators": [{"uid": "orders-dedup", "kind": "keyed", "key": ["customer_id"], "serializer": "kryo", "ttl": 1000}]},
}

# ---------------------------------------------------------------- silent cases

test_statediff_unchanged_example_passes if {
	inp := object.union(lib.example_input, {"base": lib.base_doc(lib.example_contract)})
	denied := deny with input as inp
	count(_td_diff_findings(denied)) == 0
}

test_statediff_breaking_fixture_fires if {
	inp := _td_in(_td_breaking)
	denied := deny with input as inp
	{f.rule | some f in _td_diff_findings(denied)} == _td_diff_rules
}

test_statediff_silent_without_base if {
	every inp in [
		{"contract": object.union(lib.example_contract, _td_breaking), "base": null},
		{"contract": object.union(lib.example_contract, _td_breaking)},
		{"contract": object.union(lib.example_contract, _td_breaking), "base": {"status": "added", "contract": null}},
		{"contract": object.union(lib.example_contract, _td_breaking), "base": {"status": "unparseable", "error": "bad", "contract": null}},
		{"contract": object.union(lib.example_contract, _td_breaking), "base": object.union(lib.base_doc(lib.example_contract), {"status": "added"})},
		{"contract": object.union(lib.example_contract, _td_breaking), "base": {"status": "present", "contract": "junk"}},
	] {
		denied := deny with input as inp
		count(_td_diff_findings(denied)) == 0
	}
}

test_statediff_safe_changes_pass if {
	# ttl, backend, parallelism, a new operator, a consumer: none is a state diff finding.
	ops := array.concat(
		_td_ops(0, object.union(lib.example_contract.state.operators[0], {"ttl": 172800000})),
		[{"uid": "new-op", "kind": "operator"}],
	)
	inp := _td_in({"job": {"parallelism": 8}, "state": {"operators": ops}, "metadata": {"consumers": [{"name": "ops", "contact": "#ops"}]}})
	denied := deny with input as inp
	count(_td_diff_findings(denied)) == 0
}
