package streamwarden.schema

import rego.v1

import data.streamwarden.lib

test_schema006_date_to_timestamp_under_identity_bucket_truncate if {
	spec := [
		{"source": "order_date", "transform": "identity"},
		{"source": "order_date", "transform": "bucket[16]"},
		{"source": "order_date", "transform": "truncate[4]"},
		{"source": "order_date", "transform": "day"},
	]
	head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp"}), spec)
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-SCHEMA-006"
	f.path == "table.schema[4].type"
	f.evidence.partitions == ["table.partition_spec[0] (identity)", "table.partition_spec[1] (bucket[16])", "table.partition_spec[2] (truncate[4])"]
	lib.no_rule(denied, "SW-SCHEMA-002")
}

test_schema006_time_transforms_and_void_keep_values if {
	every t in ["year", "month", "day", "hour", "void"] {
		head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp_ns"}), [{"source": "order_date", "transform": t}])
		inp := _te_in2(_te_contract(_te_fields, "backward"), head)
		denied := deny with input as inp
		count(denied) == 0
	}
}

test_schema006_numeric_promotions_keep_values if {
	spec := [
		{"source": "quantity", "transform": "identity"},
		{"source": "quantity", "transform": "bucket[8]"},
		{"source": "amount", "transform": "truncate[10]"},
	]
	head := _te_v3(_te_set(_te_set(_te_fields, 3, {"type": "long"}), 2, {"type": "decimal(20,2)"}), spec)
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema006_other_columns_partitioned_pass if {
	head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp"}), [{"source": "quantity", "transform": "identity"}, "junk"])
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	count(denied) == 0
}

test_schema006_partition_spec_not_a_list if {
	head := _te_v3(_te_set(_te_fields, 4, {"type": "timestamp"}), "oops")
	inp := _te_in2(_te_contract(_te_fields, "backward"), head)
	denied := deny with input as inp
	count(denied) == 0
}
