package streamwarden.state

import rego.v1

import data.streamwarden.lib

test_state010_equal_max_parallelism_passes if {
	inp := _st_input({}, [_st_dedup, _st_source])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-010")
}

test_state010_changed_max_parallelism_fires_per_operator if {
	inp := _st_input({"job": {"max_parallelism": 256}}, [_st_dedup, _st_source])
	findings := deny with input as inp
	count([f | some f in findings; f.rule == "SW-STATE-010"]) == 2
	some f in findings
	f.rule == "SW-STATE-010"
	f.path == "job.max_parallelism"
	f.evidence.operator_id == "04f0bc5ad44a2bf4b73330ee08fb0d5e"
	f.message == "savepoint s3://lake-savepoints/orders/savepoint-4d986c-1a2b3c4d5e6f (checkpoint 12) has operator 04f0bc5ad44a2bf4b73330ee08fb0d5e (uid \"orders-dedup\") with max parallelism 128, but job.max_parallelism is 256: Flink cannot map its key groups and refuses the restore"
}

test_state010_committer_pinned_to_one_is_skipped if {
	committer := _st_op("bf60598f000000000000000000000000", "orders-iceberg-sink", {"parallelism": 1, "max_parallelism": 1, "keyed": false})
	inp := _st_input({}, [_st_dedup, committer])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-010")
}

test_state010_keyed_operator_with_max_parallelism_one_still_fires if {
	keyed_one := object.union(_st_dedup, {"max_parallelism": 1, "parallelism": 1})
	inp := _st_input({}, [keyed_one])
	findings := deny with input as inp
	count(lib.rule_paths(findings, "SW-STATE-010")) == 1
}

test_state010_silent_without_contract_max_parallelism if {
	contract := json.remove(lib.example_contract, ["job/max_parallelism"])
	inp := _st_input_with(contract, [object.union(_st_dedup, {"max_parallelism": 512})])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-010")
}

test_state010_unclaimed_operator_is_left_to_state009 if {
	inp := _st_input({"job": {"max_parallelism": 256}}, [_st_orphan])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-010")
	count(lib.rule_paths(findings, "SW-STATE-009")) == 1
}

test_state010_stateless_operator_is_ignored if {
	inp := _st_input({"job": {"max_parallelism": 256}}, [object.union(_st_dedup, {"has_state": false})])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-010")
}
