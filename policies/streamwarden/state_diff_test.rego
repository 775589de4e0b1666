package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

_td_base_doc(base) := {
	"ref": "origin/main",
	"commit": "b0b0b0b0",
	"file": "contracts/orders.yaml",
	"status": "present",
	"error": null,
	"contract": base,
	"history": [],
}

# The example contract at base; head is the example with `patch` deep-merged into it.
_td_in(patch) := {
	"contract": object.union(lib.example_contract, patch),
	"base": _td_base_doc(lib.example_contract),
}

_td_in2(base, head) := {"contract": head, "base": _td_base_doc(base)}

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
	inp := object.union(lib.example_input, {"base": _td_base_doc(lib.example_contract)})
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
		{"contract": object.union(lib.example_contract, _td_breaking), "base": object.union(_td_base_doc(lib.example_contract), {"status": "added"})},
		{"contract": object.union(lib.example_contract, _td_breaking), "base": {"status": "present", "contract": "junk"}},
	] {
		denied := deny with input as inp
		count(_td_diff_findings(denied)) == 0
	}
}

test_statediff_base_without_status_is_compared if {
	inp := {"contract": object.union(lib.example_contract, _td_breaking), "base": {"contract": lib.example_contract}}
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	contains(f.message, "in the base to")
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

# ---------------------------------------------------------------- SW-STATE-006

test_state006_operator_uid_removed if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-006"
	f.path == "state.operators"
	f.value == "orders-dedup"
	f.evidence == {"uid": "orders-dedup", "base_section": "state.operators", "listed_in_dropped": false, "allow_non_restored_state": false}
	contains(f.message, `uid "orders-dedup" (state.operators in the base (origin/main)) is gone`)
	contains(f.message, "declare restores_from")
}

test_state006_operator_renamed_without_restores_from if {
	inp := _td_op_in(0, {"uid": "orders-dedup-v2"})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"state.operators"}
}

test_state006_renamed_with_restores_from_passes if {
	inp := _td_op_in(0, {"uid": "orders-dedup-v2", "restores_from": "orders-dedup"})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_dropped_with_allow_non_restored_state_passes if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops, "dropped": [{"uid": "orders-dedup", "reason": "dedup moved upstream"}], "allow_non_restored_state": true}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_dropped_without_allow_non_restored_state if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops, "dropped": [{"uid": "orders-dedup"}]}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-006"
	f.evidence.listed_in_dropped == true
	contains(f.message, "allow_non_restored_state is not true")
}

test_state006_allow_non_restored_state_without_dropped_entry if {
	ops := [lib.example_contract.state.operators[1]]
	inp := _td_in({"state": {"operators": ops, "allow_non_restored_state": true, "dropped": [{"uid": "other"}]}})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"state.operators"}
}

test_state006_source_and_sink_uids if {
	inp := _td_in({"job": {"sources": [{"name": "orders-topic", "uid": "orders-source-v2"}], "sinks": [{"name": "orders-table"}]}})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"job.sources", "job.sinks"}
	some f in denied
	f.path == "job.sinks"
	f.value == "orders-iceberg-sink"
}

test_state006_uid_moved_between_sections_passes if {
	# the sink uid is now declared as an operator, the source uid is claimed by restores_from
	ops := array.concat(lib.example_contract.state.operators, [
		{"uid": "orders-iceberg-sink", "kind": "operator"},
		{"uid": "kafka-src", "restores_from": "orders-source", "kind": "operator"},
	])
	inp := _td_in({"state": {"operators": ops}, "job": {"sources": [], "sinks": []}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_base_restores_from_is_not_a_uid if {
	# base orders-enrich-join restores from orders-join; head drops the restores_from: fine.
	inp := _td_op_in(1, {"restores_from": null})
	head := json.remove(inp.contract, ["state/operators/1/restores_from"])
	inp2 := {"contract": head, "base": inp.base}
	denied := deny with input as inp2
	lib.no_rule(denied, "SW-STATE-006")
}

test_state006_blank_and_missing_uids_are_ignored if {
	# (head holds no operators: state.rego's own rules read head operators as objects)
	base := {"state": {"operators": [{"kind": "keyed"}, {"uid": " ", "kind": "keyed"}, "junk"]}, "job": {"sources": "x"}}
	inp := _td_in2(base, {"state": {"operators": []}})
	denied := deny with input as inp
	count(_td_diff_findings(denied)) == 0
}

test_state006_head_without_state_section if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed"}]}}
	inp := _td_in2(base, {"job": {"name": "x"}})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-006") == {"state.operators"}
}

# ---------------------------------------------------------------- SW-STATE-007

test_state007_max_parallelism_changed if {
	inp := _td_in({"job": {"max_parallelism": 256}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	f.path == "job.max_parallelism"
	f.value == 256
	f.evidence == {"base": 128, "head": 256}
	contains(f.message, "from 128 in the base (origin/main) to 256: Flink refuses to restore a savepoint taken with one set max parallelism into a job set to another")
}

test_state007_unset_at_head if {
	inp := {"contract": json.remove(lib.example_contract, ["job/max_parallelism"]), "base": _td_base_doc(lib.example_contract)}
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	f.evidence == {"base": 128, "head": null}
	contains(f.message, "to unset: a restore keeps the savepoint's value, but nothing pins it any more")
}

test_state007_set_at_head if {
	base := json.remove(lib.example_contract, ["job/max_parallelism"])
	inp := _td_in2(base, lib.example_contract)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	f.evidence == {"base": null, "head": 128}
	contains(f.message, "from unset in the base (origin/main) to 128: the running job's savepoints carry the max parallelism Flink derived when it first started without state (128 if that was at a parallelism up to 85), and a restore with 128 set breaks unless it is that value")
}

test_state007_unset_on_both_sides_passes if {
	c := json.remove(lib.example_contract, ["job/max_parallelism"])
	inp := _td_in2(c, c)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-007")
}

test_state007_same_value_passes if {
	inp := _td_in({"job": {"max_parallelism": 128, "parallelism": 16}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-007")
}

# ---------------------------------------------------------------- SW-STATE-008

test_state008_serializer_changed if {
	inp := _td_op_in(0, {"serializer": "kryo"})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].serializer"
	f.evidence == {"uid": "orders-dedup", "base_uid": "orders-dedup", "field": "serializer", "base": "avro", "head": "kryo"}
	count(lib.rule_paths(denied, "SW-STATE-008")) == 1
}

test_state008_serializer_changed_even_with_bump if {
	inp := _td_op_in(0, {"serializer": "pojo", "schema_version": 4})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].serializer"}
}

test_state008_key_changed if {
	inp := _td_op_in(0, {"key": ["order_id", "customer_id"]})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].key"
	f.evidence.base == ["order_id"]
	contains(f.message, "key schema evolution")
}

test_state008_key_order_counts if {
	base := object.union(lib.example_contract, {"state": {"operators": _td_ops(0, object.union(lib.example_contract.state.operators[0], {"key": ["a", "b"]}))}})
	head := object.union(lib.example_contract, {"state": {"operators": _td_ops(0, object.union(lib.example_contract.state.operators[0], {"key": ["b", "a"]}))}})
	inp := _td_in2(base, head)
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].key"}
}

test_state008_kind_changed_without_bump if {
	inp := _td_op_in(0, {"kind": "operator"})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].kind"
	f.evidence.base_schema_version == 3
	f.evidence.schema_version == 3
}

test_state008_kind_changed_with_bump_passes if {
	inp := _td_op_in(0, {"kind": "broadcast", "schema_version": 4})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_kind_changed_with_lower_version if {
	inp := _td_op_in(0, {"kind": "broadcast", "schema_version": 2})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].kind"}
}

test_state008_kind_changed_version_declared_for_the_first_time if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed"}]}}
	head := {"state": {"operators": [{"uid": "a", "kind": "operator", "schema_version": 1}]}}
	inp := _td_in2(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_kind_changed_no_versions_at_all if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed"}]}}
	head := {"state": {"operators": [{"uid": "a", "kind": "operator"}]}}
	inp := _td_in2(base, head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	contains(f.message, "keeps schema_version null")
}

test_state008_matched_through_restores_from if {
	ops := _td_ops(0, {"uid": "orders-dedup-v2", "restores_from": "orders-dedup", "kind": "keyed", "key": ["order_id"], "serializer": "pojo", "schema_version": 3})
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-008"
	f.path == "state.operators[0].serializer"
	f.evidence.uid == "orders-dedup-v2"
	f.evidence.base_uid == "orders-dedup"
}

test_state008_uid_match_beats_restores_from if {
	# orders-enrich-join keeps its uid; its restores_from names orders-dedup's uid by mistake.
	ops := _td_ops(1, object.union(lib.example_contract.state.operators[1], {"restores_from": "orders-dedup"}))
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_one_finding_per_change if {
	inp := _td_op_in(0, {"serializer": "kryo", "key": ["customer_id"], "kind": "operator"})
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-STATE-008") == {"state.operators[0].serializer", "state.operators[0].key", "state.operators[0].kind"}
}

test_state008_undeclared_values_are_not_changes if {
	head_op := json.remove(lib.example_contract.state.operators[0], ["serializer", "key"])
	inp := _td_in({"state": {"operators": _td_ops(0, head_op)}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
	base := object.union(lib.example_contract, {"state": {"operators": _td_ops(0, head_op)}})
	inp2 := _td_in2(base, lib.example_contract)
	denied2 := deny with input as inp2
	lib.no_rule(denied2, "SW-STATE-008")
}

test_state008_new_operator_passes if {
	ops := array.concat(lib.example_contract.state.operators, [{"uid": "brand-new", "kind": "keyed", "serializer": "kryo"}, {"kind": "keyed"}])
	inp := _td_in({"state": {"operators": ops}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}

test_state008_duplicate_base_uids_first_wins if {
	base := {"state": {"operators": [{"uid": "a", "kind": "keyed", "serializer": "avro"}, {"uid": "a", "kind": "keyed", "serializer": "pojo"}]}}
	head := {"state": {"operators": [{"uid": "a", "kind": "keyed", "serializer": "avro"}]}}
	inp := _td_in2(base, head)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-008")
}
