package streamwarden.state

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-STATE-004

test_state004_max_parallelism_absent if {
	inp := lib.contract_without(["job/max_parallelism"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	f.path == "job.max_parallelism"
	f.evidence == {"max_parallelism": null, "parallelism": 4, "derived_max_parallelism": 128}
	contains(f.message, "job.max_parallelism is not set: Flink then derives the max parallelism (the number of key groups) only when the job starts without state (128 for job.parallelism 4, the same for any parallelism up to 85) and keeps the savepoint's value on every restore, which breaks when the job is rescaled above that value or when another max parallelism is set later")
	not contains(f.message, "breaks every restore")
}

test_state004_derived_value_for_a_larger_parallelism if {
	inp := lib.contract_with({"job": {"max_parallelism": null, "parallelism": 100}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	f.evidence.derived_max_parallelism == 256
	contains(f.message, "(256 for job.parallelism 100, the same for any parallelism up to 171)")
}

test_state004_without_a_parallelism if {
	inp := lib.contract_without(["job/max_parallelism", "job/parallelism"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	f.evidence == {"max_parallelism": null, "parallelism": null, "derived_max_parallelism": null}
	contains(f.message, "(128 for any parallelism up to 85, more above)")
}

test_state004_max_parallelism_auto if {
	inp := lib.contract_with({"job": {"max_parallelism": -1}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-STATE-004"
	contains(f.message, "job.max_parallelism is -1")
}

test_state004_max_parallelism_one_passes if {
	inp := lib.contract_with({"job": {"max_parallelism": 1}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-STATE-004")
}

test_state004_without_job_section if {
	findings := deny with input as {"contract": {}}
	lib.rule_paths(findings, "SW-STATE-004") == {"job.max_parallelism"}
}
