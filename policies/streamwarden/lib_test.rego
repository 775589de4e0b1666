package streamwarden.lib

import rego.v1

# A full example contract (as in contracts/examples/orders-enrichment/contract.yaml) normalized: durations in ms, sizes in
# bytes, enums lower-case, waivers[].expires_end_ms added. Other packages' tests use it as the
# passing case: it breaks no contract-only rule except SW-RET-002 (which it waives).
example_contract := {
	"apiVersion": "streamwarden/v1",
	"kind": "PipelineContract",
	"metadata": {
		"name": "orders-enrichment",
		"owner": "payments-data",
		"description": "Enriches order events and writes the curated orders table.",
		"consumers": [
			{
				"name": "finance-dashboard",
				"freshness": 1800000,
				"contact": "#finance-data"
			},
			{
				"name": "fraud-features",
				"freshness": 600000,
				"contact": "fraud-ml@example.com"
			}
		]
	},
	"job": {
		"name": "orders-enrichment",
		"deployment": [
			"deploy/orders-enrichment/flinkdeployment.yaml",
			"deploy/orders-enrichment/job.sql"
		],
		"parallelism": 4,
		"max_parallelism": 128,
		"restart_strategy": "exponential-delay",
		"sources": [
			{
				"name": "orders-topic",
				"kind": "kafka",
				"uid": "orders-source",
				"rewindable": true,
				"retention": 3024000000
			}
		],
		"sinks": [
			{
				"name": "orders-table",
				"kind": "iceberg",
				"table": "sales.orders",
				"uid": "orders-iceberg-sink",
				"delivery": "exactly_once"
			}
		]
	},
	"state": {
		"backend": "rocksdb",
		"incremental": true,
		"max_size": 53687091200,
		"auto_generated_uids": "forbidden",
		"allow_non_restored_state": false,
		"dropped": [],
		"operators": [
			{
				"uid": "orders-dedup",
				"kind": "keyed",
				"key": [
					"order_id"
				],
				"ttl": 86400000,
				"serializer": "avro",
				"schema_version": 3,
				"carries_table_schema": false
			},
			{
				"uid": "orders-enrich-join",
				"restores_from": "orders-join",
				"kind": "keyed",
				"key": [
					"customer_id"
				],
				"ttl": 7200000,
				"serializer": "pojo",
				"schema_version": 1,
				"carries_table_schema": true
			}
		]
	},
	"checkpoint": {
		"mode": "exactly_once",
		"interval": 60000,
		"timeout": 600000,
		"min_pause": 30000,
		"max_concurrent": 1,
		"storage": "s3://lake-checkpoints/orders-enrichment",
		"externalized": "retain_on_cancellation",
		"num_retained": 3,
		"unaligned": false,
		"tolerable_failures": 3,
		"health": {
			"max_age": 300000,
			"max_duration": 60000,
			"max_failed": 3
		}
	},
	"table": {
		"catalog": "lake",
		"identifier": "sales.orders",
		"format_version": 2,
		"schema": [
			{
				"name": "order_id",
				"type": "long",
				"required": true,
				"id": 1
			},
			{
				"name": "customer_id",
				"type": "long",
				"required": true,
				"id": 2
			},
			{
				"name": "amount",
				"type": "decimal(12,2)",
				"id": 3
			},
			{
				"name": "currency",
				"type": "string",
				"id": 4,
				"default": "EUR"
			},
			{
				"name": "event_time",
				"type": "timestamptz",
				"required": true,
				"id": 5
			}
		],
		"identifier_fields": [
			"order_id"
		],
		"partition_spec": [
			{
				"source": "event_time",
				"transform": "day"
			}
		],
		"properties": {
			"write.upsert.enabled": "true"
		},
		"commit": {
			"max_interval": 300000,
			"lineage": "required"
		}
	},
	"retention": {
		"rollback_window": 259200000,
		"snapshots": {
			"max_age": 604800000,
			"min_keep": 20
		},
		"checkpoints": {
			"num_retained": 3
		},
		"savepoints": {
			"max_age": 2592000000,
			"min_keep": 5
		},
		"data": {
			"column": "event_time",
			"max_age": 34560000000
		}
	},
	"schema_evolution": {
		"compatibility": "full",
		"allow_renames": false,
		"coordinate_with_state": true
	},
	"quality": {
		"freshness": {
			"column": "event_time",
			"max_lag": 900000
		},
		"unique": [
			"order_id"
		],
		"not_null": [
			"order_id",
			"customer_id",
			"event_time"
		]
	},
	"backfills": [],
	"waivers": [
		{
			"rule": "SW-RET-002",
			"reason": "savepoint bucket migration; snapshots are kept by a tag until it ends",
			"expires": "2027-12-31",
			"approved_by": "data-platform",
			"expires_end_ms": 1830297600000
		}
	]
}

# A full input document around example_contract; no fact source configured.
example_input := {
	"contract": example_contract,
	"base": null,
	"facts": {
		"deployment": {"available": false, "configured": false},
		"flink": {"available": false, "configured": false},
		"iceberg": {"available": false, "configured": false},
		"data": {"available": false, "configured": false},
		"savepoint": {"available": false, "configured": false},
	},
	"now_ms": 1764000000000,
	"environment": null,
}

# contract_with(patch): an input document of the example contract with `patch` deep-merged into it;
# contract_without(paths): of the example contract without the fields at `paths`
# ("checkpoint/storage").
# Always bind a `with` value to a local first (`inp := lib.contract_with(...)`,
# `inp := lib.example_input`): in regorus 0.13, when the value of `with input as` is a function
# call or a rule of another package, functions of that package that read its own rules
# (lib.fmt_ms reading _ms_units) evaluate wrongly inside the `with`, so messages (and findings)
# silently change.
contract_with(patch) := {"contract": object.union(example_contract, patch)}

contract_without(paths) := {"contract": json.remove(example_contract, paths)}

# base_doc(base): input.base of a pull request whose base branch holds contract `base`;
# diff_input(base, head): the input document of contract `head` against it.
base_doc(base) := {
	"ref": "origin/main",
	"commit": "b0b0b0b0",
	"file": "contracts/orders.yaml",
	"status": "present",
	"error": null,
	"contract": base,
	"history": [],
}

diff_input(base, head) := {"contract": head, "base": base_doc(base)}

# rule_ids(findings): the rule ids of the findings.
rule_ids(findings) := {f.rule | some f in findings}

# rule_paths(findings, id): the paths of the findings with that rule id.
rule_paths(findings, id) := {f.path | some f in findings; f.rule == id}

# no_rule(findings, id): no finding has that rule id.
no_rule(findings, id) if count(rule_paths(findings, id)) == 0

test_fmt_age_to_the_second if {
	fmt_age(0) == "0s"
	fmt_age(999) == "0s"
	fmt_age(-5000) == "0s"
	fmt_age(396019) == "6m36s"
	fmt_age(2820000) == "47m"
	fmt_age(90061000) == "1d1h1m1s"
	fmt_age(172800000) == "2d"
	fmt_age(3600000 * 24 * 400) == "400d"
}

test_fmt_ms_units if {
	fmt_ms(0) == "0s"
	fmt_ms(500) == "500ms"
	fmt_ms(1500) == "1500ms"
	fmt_ms(1000) == "1s"
	fmt_ms(90000) == "90s"
	fmt_ms(60000) == "1m"
	fmt_ms(600000) == "10m"
	fmt_ms(5400000) == "90m"
	fmt_ms(7200000) == "2h"
	fmt_ms(86400000) == "1d"
	fmt_ms(604800000) == "7d"
	fmt_ms(-60000) == "-1m"
	fmt_ms(-1) == "-1ms"
}

test_fmt_ms_not_a_whole_number if {
	fmt_ms(1.5) == "1.5"
	fmt_ms("60s") == "60s"
}

test_fmt_bytes_units if {
	fmt_bytes(0) == "0B"
	fmt_bytes(512) == "512B"
	fmt_bytes(1536) == "1536B"
	fmt_bytes(1024) == "1KiB"
	fmt_bytes(536870912) == "512MiB"
	fmt_bytes(1073741824) == "1GiB"
	fmt_bytes(1073741825) == "1073741825B"
	fmt_bytes(53687091200) == "50GiB"
	fmt_bytes(2199023255552) == "2TiB"
}

test_fmt_bytes_not_a_whole_number if {
	fmt_bytes(0.5) == "0.5"
	fmt_bytes(null) == "null"
}

test_is_int if {
	is_int(3)
	is_int(2.0)
	not is_int(2.5)
	not is_int("3")
}

test_blank if {
	blank(null)
	blank("")
	blank("   ")
	blank(3)
	not blank("payments-data")
	not blank(" x ")
}

test_positive if {
	positive(1)
	not positive(0)
	not positive(-1)
	not positive("5")
	not positive(null)
}

test_quote if {
	quote("orders") == `"orders"`
	quote(null) == "null"
	quote(3) == "3"
}

test_rule_paths_helpers if {
	findings := {{"rule": "SW-X-001", "path": "a.b"}, {"rule": "SW-X-001", "path": "c"}, {"rule": "SW-Y-001", "path": "d"}}
	rule_paths(findings, "SW-X-001") == {"a.b", "c"}
	no_rule(findings, "SW-Z-001")
	not no_rule(findings, "SW-Y-001")
}

test_first_index_keeps_the_lowest_index_of_each_key if {
	first_index([["b", 0], ["a", 1], ["b", 2], ["a", 3], ["c", 4]]) == {"a": 1, "b": 0, "c": 4}
}

test_first_index_of_numbers_and_arrays if {
	first_index([[7, 2], [7, 0], [3, 1]]) == {7: 0, 3: 1}
	first_index([[["job", null], 0], [["job", "id"], 1], [["job", null], 2]]) == {["job", null]: 0, ["job", "id"]: 1}
}

test_first_index_of_nothing if {
	first_index([]) == {}
}

test_first_index_of_distinct_keys_keeps_every_pair if {
	first_index([["b", 0], ["a", 1], [["x"], 2], [null, 3]]) == {"b": 0, "a": 1, ["x"]: 2, null: 3}
}

test_first_index_with_one_repeated_key_among_distinct_ones if {
	first_index([["a", 0], ["b", 1], ["c", 2], ["b", 3]]) == {"a": 0, "b": 1, "c": 2}
}

# --- shared rule helpers --------------------------------------------------------------------------

test_finding_is_the_element_shape_plus_extra if {
	f := finding("SW-X-001", "a.b", "msg", {"k": 1}, {"source": "iceberg", "value": 7})
	f == {"rule": "SW-X-001", "message": "msg", "path": "a.b", "evidence": {"k": 1}, "source": "iceberg", "value": 7}
	finding("SW-X-001", "a.b", "msg", {}, {}) == {"rule": "SW-X-001", "message": "msg", "path": "a.b", "evidence": {}}
}

test_finding_extra_cannot_replace_the_element_fields if {
	f := finding("SW-X-001", "a.b", "msg", {}, {"rule": "OTHER", "path": "x", "file": "f.yaml", "line": 3})
	f.rule == "SW-X-001"
	f.path == "a.b"
	f.file == "f.yaml"
	f.line == 3
}

test_unlimited_failures if {
	unlimited_failures(-1)
	unlimited_failures(2147483647)
	unlimited_failures(2147483648)
	not unlimited_failures(0)
	not unlimited_failures(3)
	not unlimited_failures(2147483646)
}

_t_sinks := {"job": {"sinks": [
	{"name": "orders", "delivery": "exactly_once"},
	{"delivery": "exactly_once"},
	{"name": "audit", "delivery": "at_least_once"},
	{"name": "plain"},
	{"name": "orders", "delivery": "exactly_once"},
]}}

test_exactly_once_sink_labels_in_order_with_index_for_unnamed if {
	exactly_once_sink_labels(_t_sinks) == ["orders", "job.sinks[1]", "orders"]
	exactly_once_sink_labels({}) == []
	exactly_once_sink_labels({"job": {"sinks": [{"name": "a", "delivery": "at_least_once"}]}}) == []
}

test_exactly_once_sink_names_a_set_with_null_for_unnamed if {
	exactly_once_sink_names(_t_sinks) == {"orders", null}
	exactly_once_sink_names({}) == set()
}

test_iceberg_only_when_available if {
	ice := {"available": true, "identifier": "db.t", "catalog": "lake"}
	iceberg({"facts": {"iceberg": ice}}) == ice
	not iceberg({"facts": {"iceberg": {"available": false}}})
	not iceberg({"facts": {}})
	not iceberg({})
	iceberg_name(ice) == "db.t (catalog lake)"
}

test_checkpointing_reasons_state_first_then_exactly_once_sinks if {
	sinks := exactly_once_sink_labels(_t_sinks)
	checkpointing_reasons([], sinks) == ["it has exactly-once sinks (orders, job.sinks[1], orders)"]
	checkpointing_reasons([{"uid": "a"}, {"uid": "b"}], sinks) == [
		"it keeps state (2 operators under state.operators)",
		"it has exactly-once sinks (orders, job.sinks[1], orders)",
	]
	checkpointing_reasons([{"uid": "a"}], []) == ["it keeps state (1 operators under state.operators)"]
	checkpointing_reasons([], []) == []
}

test_flink_job_only_when_the_job_was_found_and_read if {
	fl := {"available": true, "job_found": true, "job": {"available": true, "state": "running"}}
	flink_job(fl) == fl
	not flink_job(object.union(fl, {"available": false}))
	not flink_job(object.union(fl, {"job_found": false}))
	not flink_job(object.union(fl, {"job": {"available": false}}))
	not flink_job({})
}

test_gathered_only_when_available if {
	sp := {"available": true, "location": "s3://sp/1"}
	gathered(sp) == sp
	not gathered({"available": false, "configured": true})
	not gathered({})
}

test_gate_severity_is_an_error_in_the_gate_only if {
	gate_severity == {"severity": "error"} with input as {"mode": "gate"}
	gate_severity == {} with input as {"mode": "check"}
	gate_severity == {} with input as {}
}

test_diff_head_is_an_object_contract if {
	diff_head({"x": 1}) == {"x": 1}
	not diff_head(null)
	not diff_head("junk")
}

test_consumer_names_in_order_skipping_what_has_no_name if {
	c := {"metadata": {"consumers": [{"name": "bi"}, "junk", {"team": "x"}, {"name": 7}, {"name": "ml"}]}}
	consumer_names(c) == ["bi", "ml"]
	consumer_names({"metadata": {"consumers": "junk"}}) == []
	consumer_names({}) == []
}

test_flink_job_ref_and_data_table_name if {
	flink_job_ref({"job": {"state": "RUNNING"}, "job_name": "orders", "job_id": "4d986ca0aa11bb22"}) == "RUNNING job orders (jid 4d986ca0…)"
	data_table_name({"table": "db.t", "catalog": "lake"}) == "db.t (catalog lake)"
}

test_list_at_a_list_or_nothing if {
	list_at({"a": {"b": [1, 2]}}, ["a", "b"]) == [1, 2]
	list_at({"a": [3]}, "a") == [3]
	list_at({"a": {"b": "junk"}}, ["a", "b"]) == []
	list_at({}, ["a", "b"]) == []
}

test_fmt_size_to_a_tenth_of_the_largest_unit if {
	fmt_size(15032385536) == "14.0GiB"
	fmt_size(1536) == "1.5KiB"
	fmt_size(1024) == "1.0KiB"
	fmt_size(1073741823) == "1024.0MiB"
	fmt_size(2199023255552) == "2.0TiB"
	fmt_size(512) == "512B"
	fmt_size(0) == "0B"
}

test_digits_value_with_leading_zeros if {
	digits_value("08") == 8
	digits_value("0") == 0
	digits_value("") == 0
	digits_value("2026") == 2026
	digits_value("000100") == 100
}

test_diff_base_of_a_present_base if {
	inp := {"base": {"status": "present", "ref": "origin/main", "contract": {"x": 1}}}
	diff_base_doc(inp) == inp.base
	diff_base(inp) == {"x": 1}
	diff_base_name(inp) == "the base (origin/main)"
}

test_diff_base_without_status_counts_as_present if {
	diff_base({"base": {"contract": {"x": 1}}}) == {"x": 1}
	diff_base_name({"base": {"contract": {}}}) == "the base"
}

test_diff_base_none_for_added_unparseable_or_missing if {
	not diff_base({"base": {"status": "added", "contract": {"x": 1}}})
	not diff_base({"base": {"status": "unparseable", "error": "bad"}})
	not diff_base({"base": {"status": "present", "contract": "junk"}})
	not diff_base({"base": "junk"})
	not diff_base({})
	not diff_base_doc({"base": null})
	diff_base_doc({"base": {"status": "added"}}) == {"status": "added"}
}

test_diff_base_name_needs_a_string_ref if {
	diff_base_name({"base": {"ref": 3}}) == "the base"
	diff_base_name({}) == "the base"
}

test_derived_max_parallelism_follows_flink if {
	derived_max_parallelism(1) == 128
	derived_max_parallelism(4) == 128
	derived_max_parallelism(85) == 128
	derived_max_parallelism(86) == 256
	derived_max_parallelism(100) == 256
	derived_max_parallelism(171) == 256
	derived_max_parallelism(172) == 512
	derived_max_parallelism(30000) == 32768
}

test_derived_up_to_is_the_last_parallelism_with_the_same_value if {
	derived_up_to(128) == 85
	derived_up_to(256) == 171
	derived_up_to(512) == 341
	derived_up_to(32768) == 32768
	# at each bound the next parallelism derives the next power of two
	every m in [128, 256, 512, 1024, 2048, 4096, 8192, 16384] {
		derived_max_parallelism(derived_up_to(m)) == m
		derived_max_parallelism(derived_up_to(m) + 1) == 2 * m
	}
}

test_source_margin_a_tenth_of_the_retention_at_least_an_hour if {
	source_margin({"retention": 604800000}) == 60480000 # 7d -> 16h48m
	source_margin({"retention": 86400000}) == 8640000 # 1d -> 2h24m
	source_margin({"retention": 7200000}) == 3600000 # 2h -> the one-hour floor
	source_margin({"retention": 0}) == 3600000
}

test_source_margin_declared_wins if {
	source_margin({"retention": 604800000, "retention_margin": 0}) == 0
	source_margin({"retention": 604800000, "retention_margin": 86400000}) == 86400000
	source_margin_text({"retention": 604800000, "retention_margin": 86400000}) == "retention_margin 1d"
	source_margin_text({"retention": 604800000}) == "a margin of 16h48m (a tenth of its retention, at least 1h)"
}

test_source_margin_undefined_without_a_retention if {
	not source_margin({"rewindable": true})
	not source_margin({"retention": "7d"})
}

test_source_label_names_the_entry if {
	source_label({"name": "orders-topic"}, 2) == `source "orders-topic" (job.sources[2])`
	source_label({}, 0) == "source null (job.sources[0])"
}
