package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep

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
