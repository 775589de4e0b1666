package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_checkpoint_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-CKPT-004

_t_storage_reason(storage) := reason if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 60000, "storage": storage}}}
	some f in findings
	f.rule == "SW-CKPT-004"
	f.path == "checkpoint.storage"
	f.evidence.storage == storage
	reason := f.evidence.reason
}

# ---------------------------------------------------------------- shared helpers

test_nondurable_storage_helper if {
	nondurable_storage("file:/x") == "local_file"
	not nondurable_storage("s3://x")
}
