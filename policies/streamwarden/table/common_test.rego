package streamwarden.table

import rego.v1

import data.streamwarden.lib

_t_freshness(interval, slack, freshness) := {"contract": {
	"metadata": {"consumers": [{"name": "fraud-features", "freshness": freshness, "contact": "x@example.com"}]},
	"checkpoint": {"interval": interval},
	"table": {"commit": {"max_interval": slack}},
}}

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_table_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	count(denied) == 0
}

test_upsert_enabled_helper if {
	upsert_enabled({"write.upsert.enabled": "True"})
	not upsert_enabled({"write.upsert.enabled": "no"})
	not upsert_enabled({})
}
