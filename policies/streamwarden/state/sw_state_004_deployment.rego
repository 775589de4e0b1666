package streamwarden.state

import rego.v1

import data.streamwarden.deployment as dep
import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

# SW-STATE-004 (repository side): the deployment's max parallelism is not the contract's.
deny contains f if {
	want := input.contract.job.max_parallelism
	lib.positive(want)
	some v in data.streamwarden.deployment.views
	e := v["pipeline.max-parallelism"]
	e.value != want
	f := dep.finding(
		"SW-STATE-004", "pipeline.max-parallelism", e,
		_dep_max_par_message(e, v, want),
		{
			"contract": want, "contract_field": "job.max_parallelism",
			"parallelism": _dep_parallelism(v), "derived_max_parallelism": _dep_derived(e, v),
		},
	)
}
