package streamwarden.removal

import rego.v1

_old := {
	"metadata": {"name": "orders", "consumers": [{"name": "finance", "contact": "#fin"}, {"name": "fraud"}]},
	"table": {"identifier": "sales.orders"},
}

test_deleted_contract_with_consumers_is_breaking if {
	fs := deny with input as {"contract": null, "base": {"status": "removed", "file": "c/orders.yaml", "contract": _old}}
	some f in fs
	f.rule == "SW-SCHEMA-011"
	f.file == "c/orders.yaml"
	f.evidence.consumers == ["finance", "fraud"]
	contains(f.message, "sales.orders")
}

test_deleted_contract_without_consumers_is_fine if {
	old := {"metadata": {"name": "orders"}, "table": {"identifier": "sales.orders"}}
	count(deny) == 0 with input as {"contract": null, "base": {"status": "removed", "file": "x", "contract": old}}
}

test_deleted_contract_with_empty_consumer_list_is_fine if {
	old := {"metadata": {"name": "orders", "consumers": []}}
	count(deny) == 0 with input as {"contract": null, "base": {"status": "removed", "file": "x", "contract": old}}
}

test_contract_still_present_is_not_a_removal if {
	count(deny) == 0 with input as {"contract": _old, "base": {"status": "present", "file": "x", "contract": _old}}
}

test_table_identifier_missing_still_names_the_pipeline if {
	old := {"metadata": {"name": "orders", "consumers": [{"name": "finance"}]}}
	some f in deny with input as {"contract": null, "base": {"status": "removed", "file": "x", "contract": old}}
	contains(f.message, "unknown")
}
