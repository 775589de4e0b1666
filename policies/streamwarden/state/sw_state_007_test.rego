package streamwarden.state

import rego.v1

import data.streamwarden.lib

test_statediff_base_without_status_is_compared if {
	inp := {"contract": object.union(lib.example_contract, _td_breaking), "base": {"contract": lib.example_contract}}
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	contains(f.message, "in the base to")
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
	inp := {"contract": json.remove(lib.example_contract, ["job/max_parallelism"]), "base": lib.base_doc(lib.example_contract)}
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	f.evidence == {"base": 128, "head": null}
	contains(f.message, "to unset: a restore keeps the savepoint's value, but nothing pins it any more")
}

test_state007_set_at_head if {
	base := json.remove(lib.example_contract, ["job/max_parallelism"])
	inp := lib.diff_input(base, lib.example_contract)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-STATE-007"
	f.evidence == {"base": null, "head": 128}
	contains(f.message, "from unset in the base (origin/main) to 128: the running job's savepoints carry the max parallelism Flink derived when it first started without state (128 if that was at a parallelism up to 85), and a restore with 128 set breaks unless it is that value")
}

test_state007_unset_on_both_sides_passes if {
	c := json.remove(lib.example_contract, ["job/max_parallelism"])
	inp := lib.diff_input(c, c)
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-007")
}

test_state007_same_value_passes if {
	inp := _td_in({"job": {"max_parallelism": 128, "parallelism": 16}})
	denied := deny with input as inp
	lib.no_rule(denied, "SW-STATE-007")
}
