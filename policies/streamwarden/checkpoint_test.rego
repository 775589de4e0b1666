package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# The example contract with `patch` deep-merged into it.
# Always bind a `with` value to a local first (`inp := _t_with(...)`, `inp := lib.example_input`):
# in regorus 0.13, when the value of `with input as` is a function call or a rule of another
# package, functions of that package that read its own rules (lib.fmt_ms reading _ms_units)
# evaluate wrongly inside the `with`, so messages (and findings) silently change.
_t_with(patch) := {"contract": object.union(lib.example_contract, patch)}

# The example contract without the fields at `paths` ("checkpoint/storage").
_t_without(paths) := {"contract": json.remove(lib.example_contract, paths)}

# ---------------------------------------------------------------- the example passes every rule

test_example_contract_passes_every_checkpoint_rule if {
	inp := lib.example_input
	denied := deny with input as inp
	warned := warn with input as inp
	count(denied) == 0
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-CKPT-001

test_ckpt001_stateful_without_checkpoint_section if {
	findings := deny with input as {"contract": {"state": {"operators": [{"uid": "dedup", "kind": "keyed"}]}}}
	some f in findings
	f.rule == "SW-CKPT-001"
	f.path == "checkpoint.interval"
	f.evidence == {"interval": null, "state_operators": 1, "exactly_once_sinks": []}
	contains(f.message, "not set")
	contains(f.message, "keeps state (1 operators")
}

test_ckpt001_exactly_once_sink_without_interval if {
	inp := _t_without(["checkpoint/interval", "state/operators"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-001"
	f.path == "checkpoint.interval"
	f.evidence.exactly_once_sinks == ["orders-table"]
	contains(f.message, "exactly-once sinks (orders-table)")
}

test_ckpt001_both_reasons_in_one_finding if {
	inp := _t_without(["checkpoint/interval"])
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-001") == {"checkpoint.interval"}
	some f in findings
	f.rule == "SW-CKPT-001"
	contains(f.message, "keeps state (2 operators under state.operators) and it has exactly-once sinks")
}

test_ckpt001_interval_zero_is_disabled if {
	inp := _t_with({"checkpoint": {"interval": 0}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-001"
	f.evidence.interval == 0
	contains(f.message, "checkpoint.interval is 0s")
}

test_ckpt001_interval_one_ms_is_enabled if {
	inp := _t_with({"checkpoint": {"interval": 1, "min_pause": 0, "health": {"max_age": 1}}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-001")
}

test_ckpt001_stateless_at_least_once_pipeline_may_skip_checkpoints if {
	findings := deny with input as {"contract": {"job": {"name": "j", "sinks": [{"name": "s", "delivery": "at_least_once"}]}, "state": {"operators": []}}}
	lib.no_rule(findings, "SW-CKPT-001")
}

test_ckpt001_unnamed_sink_is_named_by_index if {
	findings := deny with input as {"contract": {"job": {"sinks": [{"delivery": "exactly_once"}]}}}
	some f in findings
	f.rule == "SW-CKPT-001"
	f.evidence.exactly_once_sinks == ["job.sinks[0]"]
}

# ---------------------------------------------------------------- SW-CKPT-002

test_ckpt002_min_pause_above_interval if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 30000, "min_pause": 60000}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.min_pause"
	f.evidence == {"min_pause": 60000, "interval": 30000}
	contains(f.message, "(1m) is not shorter than checkpoint.interval (30s)")
}

test_ckpt002_min_pause_equal_to_interval_fires if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 30000, "min_pause": 30000}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {"checkpoint.min_pause"}
}

test_ckpt002_min_pause_just_below_interval_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 30000, "min_pause": 29999}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_timeout_below_max_duration if {
	findings := deny with input as {"contract": {"checkpoint": {"timeout": 30000, "health": {"max_duration": 60000}}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.timeout"
	f.evidence == {"timeout": 30000, "max_duration": 60000}
}

test_ckpt002_timeout_equal_to_max_duration_fires if {
	findings := deny with input as {"contract": {"checkpoint": {"timeout": 60000, "health": {"max_duration": 60000}}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {"checkpoint.timeout"}
}

test_ckpt002_timeout_just_above_max_duration_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"timeout": 60001, "health": {"max_duration": 60000}}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_unaligned_with_at_least_once if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "mode": "at_least_once"}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {"checkpoint.unaligned"}
}

test_ckpt002_unaligned_with_exactly_once_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "mode": "exactly_once", "max_concurrent": 1}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_aligned_at_least_once_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": false, "mode": "at_least_once", "max_concurrent": 3}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_unaligned_with_concurrent_checkpoints if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "max_concurrent": 2}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.max_concurrent"
	f.evidence == {"unaligned": true, "max_concurrent": 2}
}

test_ckpt002_unaligned_with_one_concurrent_checkpoint_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"unaligned": true, "max_concurrent": 1}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_max_age_below_interval if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 120000, "health": {"max_age": 90000}}}}
	some f in findings
	f.rule == "SW-CKPT-002"
	f.path == "checkpoint.health.max_age"
	f.evidence == {"max_age": 90000, "interval": 120000}
	contains(f.message, "(90s) is shorter than checkpoint.interval (2m)")
}

test_ckpt002_max_age_equal_to_interval_passes if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 120000, "health": {"max_age": 120000}}}}
	lib.no_rule(findings, "SW-CKPT-002")
}

test_ckpt002_each_contradiction_is_its_own_finding if {
	findings := deny with input as {"contract": {"checkpoint": {
		"interval": 60000, "min_pause": 60000, "timeout": 10000, "mode": "at_least_once",
		"unaligned": true, "max_concurrent": 2, "health": {"max_duration": 10000, "max_age": 59999},
	}}}
	lib.rule_paths(findings, "SW-CKPT-002") == {
		"checkpoint.min_pause", "checkpoint.timeout", "checkpoint.unaligned",
		"checkpoint.max_concurrent", "checkpoint.health.max_age",
	}
	count([f | some f in findings; f.rule == "SW-CKPT-002"]) == 5
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

test_ckpt004_file_uris_fire if {
	_t_storage_reason("file:///var/flink/ckpt") == "local_file"
	_t_storage_reason("file:/var/flink/ckpt") == "local_file"
	_t_storage_reason("FILE:///var/flink/ckpt") == "local_file"
}

test_ckpt004_jobmanager_fires if {
	_t_storage_reason("jobmanager") == "jobmanager"
	_t_storage_reason(" JobManager ") == "jobmanager"
}

test_ckpt004_local_paths_fire if {
	_t_storage_reason("/var/flink/ckpt") == "local_path"
	_t_storage_reason("ckpt-dir") == "local_path"
	_t_storage_reason(`C:\flink\ckpt`) == "local_path"
	_t_storage_reason("filesystem") == "local_path"
}

test_ckpt004_message_names_the_storage if {
	findings := deny with input as {"contract": {"checkpoint": {"storage": "file:///var/flink/ckpt"}}}
	some f in findings
	f.rule == "SW-CKPT-004"
	contains(f.message, `checkpoint.storage "file:///var/flink/ckpt" is on the local filesystem`)
	contains(f.message, "s3://")
}

test_ckpt004_durable_uris_pass if {
	not _t_storage_reason("s3://lake-checkpoints/orders")
	not _t_storage_reason("gs://bucket/ckpt")
	not _t_storage_reason("abfs://c@acct.dfs.core.windows.net/ckpt")
	not _t_storage_reason("hdfs:///flink/ckpt")
	not _t_storage_reason("s3a://bucket/ckpt")
}

test_ckpt004_missing_storage_with_checkpointing if {
	inp := _t_without(["checkpoint/storage"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-004"
	f.path == "checkpoint.storage"
	f.evidence == {"storage": null, "reason": "missing", "interval": 60000}
	contains(f.message, "interval 1m")
}

test_ckpt004_blank_storage_is_missing_once if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 60000, "storage": "  "}}}
	ckpt004 := [f | some f in findings; f.rule == "SW-CKPT-004"]
	count(ckpt004) == 1
	ckpt004[0].evidence.reason == "missing"
}

test_ckpt004_missing_storage_without_checkpointing_is_silent if {
	findings := deny with input as {"contract": {"checkpoint": {"mode": "exactly_once"}}}
	lib.no_rule(findings, "SW-CKPT-004")
}

# ---------------------------------------------------------------- SW-CKPT-005

test_ckpt005_delete_on_cancellation_with_rollback_window if {
	inp := _t_with({"checkpoint": {"externalized": "delete_on_cancellation"}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-005"
	f.path == "checkpoint.externalized"
	f.evidence == {"externalized": "delete_on_cancellation", "rollback_window": 259200000}
	contains(f.message, "externalized is delete_on_cancellation but retention.rollback_window is 3d")
}

test_ckpt005_none_with_rollback_window if {
	inp := _t_with({"checkpoint": {"externalized": "none"}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-CKPT-005") == {"checkpoint.externalized"}
}

test_ckpt005_absent_externalized_is_flink_default if {
	inp := _t_without(["checkpoint/externalized"])
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-005"
	f.path == "checkpoint.externalized"
	f.evidence.externalized == null
	contains(f.message, "not set (Flink default")
}

test_ckpt005_zero_rollback_window_is_silent if {
	inp := _t_with({"checkpoint": {"externalized": "delete_on_cancellation"}, "retention": {"rollback_window": 0}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-005")
}

test_ckpt005_no_rollback_window_is_silent if {
	findings := deny with input as {"contract": {"checkpoint": {"interval": 60000, "externalized": "delete_on_cancellation"}}}
	lib.no_rule(findings, "SW-CKPT-005")
}

test_ckpt005_no_checkpoint_section_is_silent if {
	findings := deny with input as {"contract": {"retention": {"rollback_window": 259200000}}}
	lib.no_rule(findings, "SW-CKPT-005")
}

test_ckpt005_shortest_window_fires if {
	findings := deny with input as {"contract": {"checkpoint": {}, "retention": {"rollback_window": 1}}}
	lib.rule_paths(findings, "SW-CKPT-005") == {"checkpoint.externalized"}
}

# ---------------------------------------------------------------- SW-CKPT-006

test_ckpt006_fewer_than_retention_asks if {
	inp := _t_with({"checkpoint": {"num_retained": 2}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-006"
	f.path == "checkpoint.num_retained"
	f.evidence.num_retained == 2
	f.evidence.required == 3
	contains(f.message, "num_retained is 2 but the retention contract needs at least 3")
}

test_ckpt006_equal_to_retention_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"num_retained": 3}, "retention": {"checkpoints": {"num_retained": 3}}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_one_with_rollback_window if {
	findings := warn with input as {"contract": {"checkpoint": {"num_retained": 1}, "retention": {"rollback_window": 86400000}}}
	some f in findings
	f.rule == "SW-CKPT-006"
	f.path == "checkpoint.num_retained"
	f.evidence.required == 2
}

test_ckpt006_two_with_rollback_window_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"num_retained": 2}, "retention": {"rollback_window": 86400000}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_larger_requirement_wins_in_one_finding if {
	findings := warn with input as {"contract": {
		"checkpoint": {"num_retained": 1},
		"retention": {"rollback_window": 86400000, "checkpoints": {"num_retained": 5}},
	}}
	ckpt006 := [f | some f in findings; f.rule == "SW-CKPT-006"]
	count(ckpt006) == 1
	ckpt006[0].evidence.required == 5
}

test_ckpt006_absent_num_retained_is_flink_default_one if {
	inp := _t_without(["checkpoint/num_retained"])
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-006"
	f.evidence.num_retained == null
	f.evidence.effective_num_retained == 1
	contains(f.message, "not set (Flink default: 1)")
}

test_ckpt006_absent_num_retained_meets_a_requirement_of_one if {
	findings := warn with input as {"contract": {"checkpoint": {"interval": 60000}, "retention": {"checkpoints": {"num_retained": 1}}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_no_checkpoint_section_is_silent if {
	findings := warn with input as {"contract": {"retention": {"rollback_window": 86400000, "checkpoints": {"num_retained": 3}}}}
	lib.no_rule(findings, "SW-CKPT-006")
}

test_ckpt006_is_a_warning if {
	inp := _t_with({"checkpoint": {"num_retained": 1}})
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-006")
}

# ---------------------------------------------------------------- SW-CKPT-007

test_ckpt007_exactly_once_sink_with_at_least_once_mode if {
	inp := _t_with({"checkpoint": {"mode": "at_least_once"}})
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-CKPT-007"
	f.path == "checkpoint.mode"
	f.evidence == {"mode": "at_least_once", "exactly_once_sinks": ["orders-table"]}
}

test_ckpt007_at_least_once_sinks_pass if {
	findings := deny with input as {"contract": {
		"job": {"sinks": [{"name": "s", "delivery": "at_least_once"}]},
		"checkpoint": {"mode": "at_least_once"},
	}}
	lib.no_rule(findings, "SW-CKPT-007")
}

test_ckpt007_absent_mode_is_exactly_once if {
	inp := _t_without(["checkpoint/mode"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-CKPT-007")
}

# ---------------------------------------------------------------- SW-CKPT-008

test_ckpt008_minus_one_is_unlimited if {
	inp := _t_with({"checkpoint": {"tolerable_failures": -1}})
	findings := warn with input as inp
	ckpt008 := [f | some f in findings; f.rule == "SW-CKPT-008"]
	count(ckpt008) == 1
	ckpt008[0].path == "checkpoint.tolerable_failures"
	ckpt008[0].evidence == {"tolerable_failures": -1, "unlimited": true}
}

test_ckpt008_int_max_is_unlimited if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 2147483647}}}
	lib.rule_paths(findings, "SW-CKPT-008") == {"checkpoint.tolerable_failures"}
}

test_ckpt008_just_below_int_max_without_health_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 2147483646}}}
	lib.no_rule(findings, "SW-CKPT-008")
}

test_ckpt008_above_max_failed if {
	inp := _t_with({"checkpoint": {"tolerable_failures": 4}})
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-CKPT-008"
	f.path == "checkpoint.tolerable_failures"
	f.evidence == {"tolerable_failures": 4, "max_failed": 3}
}

test_ckpt008_equal_to_max_failed_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 3, "health": {"max_failed": 3}}}}
	lib.no_rule(findings, "SW-CKPT-008")
}

test_ckpt008_zero_passes if {
	findings := warn with input as {"contract": {"checkpoint": {"tolerable_failures": 0}}}
	lib.no_rule(findings, "SW-CKPT-008")
}

# ---------------------------------------------------------------- shared helpers

test_nondurable_storage_helper if {
	nondurable_storage("file:/x") == "local_file"
	not nondurable_storage("s3://x")
}
