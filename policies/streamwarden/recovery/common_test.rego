package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

_t_backfill(backfill) := {"contract": {"backfills": [{"job": "orders-backfill", "branch": "backfill-2025-03"}, backfill]}}

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_recovery_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-REC-006 (contract side)

_t_sources(sources, retention) := {"contract": {"job": {"name": "j", "sources": sources}, "retention": retention}}
