# Tests of checkpoint_deployment.rego: the repository side of SW-CKPT-001, 003, 004, 005, 006,
# 007 and 008. Fixtures (fx_*) are in deployment_test.rego.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

_dep_t_off := {"execution.checkpointing.interval": dep.fx_default("execution.checkpointing.interval", null)}

test_dep_aligned_deployment_has_no_repository_findings if {
	in1 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(deny)) == 0 with input as in1
	in2 := dep.fx_input(dep.fx_contract, {})
	count(dep.fx_deployment_findings(warn)) == 0 with input as in2
}

test_dep_repository_rules_quiet_when_facts_unavailable if {
	in3 := dep.fx_unavailable(dep.fx_contract)
	count(dep.fx_deployment_findings(deny)) == 0 with input as in3
	in4 := dep.fx_unavailable(dep.fx_contract)
	count(dep.fx_deployment_findings(warn)) == 0 with input as in4
}

# --- SW-CKPT-001 ---------------------------------------------------------------------------------

test_dep_ckpt_001_interval_unset_fires_at_the_anchor if {
	in5 := dep.fx_input(dep.fx_contract, _dep_t_off)
	fs := deny with input as in5
	[f] := dep.fx_of("SW-CKPT-001", fs)
	f.file == "deploy/fd.yaml"
	f.line == 7
	f.path == "execution.checkpointing.interval"
	f.value == null
	contains(f.message, "Flink's default: no periodic checkpoints")
	contains(f.message, "to the contract's 1m")
	# SW-CKPT-003 does not repeat it, nor compare settings left at Flink's default
	count(dep.fx_of("SW-CKPT-003", fs)) == 0
}

test_dep_ckpt_001_interval_zero_fires_at_its_line if {
	zero := {"execution.checkpointing.interval": dep.fx_set("execution.checkpointing.interval", 0, 10)}
	in6 := dep.fx_input(dep.fx_contract, zero)
	fs := deny with input as in6
	[f] := dep.fx_of("SW-CKPT-001", fs)
	f.line == 10
	contains(f.message, "sets execution.checkpointing.interval to 0 at deploy/fd.yaml:10")
}

test_dep_ckpt_001_reason_exactly_once_sink_only if {
	contract := {"job": {"name": "x", "sinks": [{"name": "t", "delivery": "exactly_once"}]}}
	in7 := dep.fx_input(contract, _dep_t_off)
	fs := deny with input as in7
	[f] := dep.fx_of("SW-CKPT-001", fs)
	contains(f.message, "exactly-once sinks (t)")
	contains(f.message, "for example to 60 s")
}

test_dep_ckpt_001_quiet_for_a_stateless_pipeline if {
	in8 := dep.fx_input(dep.fx_stateless, _dep_t_off)
	count(dep.fx_of("SW-CKPT-001", deny)) == 0 with input as in8
}

# --- SW-CKPT-003 ---------------------------------------------------------------------------------

test_dep_ckpt_003_interval_differs if {
	in9 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.interval": dep.fx_set("execution.checkpointing.interval", 30000, 10)})
	fs := deny with input as in9
	[f] := dep.fx_of("SW-CKPT-003", fs)
	f.line == 10
	f.value == 30000
	f.evidence.contract_field == "checkpoint.interval"
	contains(f.message, "the contract says 1m (checkpoint.interval) but the repository sets execution.checkpointing.interval to 30s at deploy/fd.yaml:10")
}

test_dep_ckpt_003_each_setting_fires_alone if {
	changes := {
		"execution.checkpointing.mode": "at_least_once",
		"execution.checkpointing.timeout": 300000,
		"execution.checkpointing.min-pause": 10000,
		"execution.checkpointing.max-concurrent-checkpoints": 2,
		"execution.checkpointing.unaligned.enabled": true,
		"execution.checkpointing.tolerable-failed-checkpoints": 1,
	}
	every key, value in changes {
		in10 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, value, 40)})
		fs := deny with input as in10
		[f] := dep.fx_of("SW-CKPT-003", fs)
		f.path == key
		f.line == 40
	}
}

test_dep_ckpt_003_default_is_compared_and_named if {
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/checkpoint/timeout", "value": 300000}])
	in11 := dep.fx_input(contract, {"execution.checkpointing.timeout": dep.fx_default("execution.checkpointing.timeout", 600000)})
	fs := deny with input as in11
	[f] := dep.fx_of("SW-CKPT-003", fs)
	f.line == 7
	f.evidence.deployment_source == "Flink default (unset in the repository)"
	contains(f.message, "leaves execution.checkpointing.timeout unset, so Flink uses its default 10m")
}

test_dep_ckpt_003_explicit_settings_still_compared_when_checkpointing_is_off if {
	overrides := object.union(_dep_t_off, {
		"execution.checkpointing.min-pause": dep.fx_set("execution.checkpointing.min-pause", 5000, 13),
		"execution.checkpointing.timeout": dep.fx_default("execution.checkpointing.timeout", 600000),
	})
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/checkpoint/timeout", "value": 300000}])
	in12 := dep.fx_input(contract, overrides)
	fs := deny with input as in12
	[f] := dep.fx_of("SW-CKPT-003", fs)
	f.path == "execution.checkpointing.min-pause"
}

test_dep_ckpt_003_undeclared_settings_are_not_compared if {
	contract := json.remove(dep.fx_contract, ["checkpoint/min_pause"])
	in13 := dep.fx_input(contract, {"execution.checkpointing.min-pause": dep.fx_set("execution.checkpointing.min-pause", 5000, 13)})
	fs := deny with input as in13
	count(dep.fx_of("SW-CKPT-003", fs)) == 0
}

test_dep_ckpt_003_unlimited_equals_unlimited if {
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/checkpoint/tolerable_failures", "value": -1}])
	unlimited := {"execution.checkpointing.tolerable-failed-checkpoints": dep.fx_set("execution.checkpointing.tolerable-failed-checkpoints", 2147483647, 20)}
	in14 := dep.fx_input(contract, unlimited)
	count(dep.fx_of("SW-CKPT-003", deny)) == 0 with input as in14
}

test_dep_ckpt_003_unparseable_value_is_left_to_deploy_003 if {
	bad := object.union(dep.fx_set("execution.checkpointing.interval", null, 10), {"error": "not a duration"})
	in15 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.interval": bad})
	fs := deny with input as in15
	count(dep.fx_of("SW-CKPT-003", fs)) == 0
	count(dep.fx_of("SW-CKPT-001", fs)) == 0
}

# --- SW-CKPT-004 ---------------------------------------------------------------------------------

test_dep_ckpt_004_jobmanager_storage if {
	in16 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.storage": dep.fx_set("state.checkpoint-storage", "jobmanager", 30)})
	fs := deny with input as in16
	[f] := dep.fx_of("SW-CKPT-004", fs)
	f.path == "execution.checkpointing.storage"
	f.line == 30
	f.evidence.reason == "jobmanager"
}

test_dep_ckpt_004_local_directories if {
	every dir in ["file:///tmp/ckpt", "/var/flink/ckpt"] {
		in17 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.dir": dep.fx_set("state.checkpoints.dir", dir, 17)})
		fs := deny with input as in17
		[f] := dep.fx_of("SW-CKPT-004", fs)
		f.path == "execution.checkpointing.dir"
		f.value == dir
		contains(f.message, "sets state.checkpoints.dir (execution.checkpointing.dir in Flink 2.x) to")
	}
}

test_dep_ckpt_004_missing_directory_while_checkpointing if {
	in18 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.dir": dep.fx_default("execution.checkpointing.dir", null)})
	fs := deny with input as in18
	[f] := dep.fx_of("SW-CKPT-004", fs)
	f.line == 7
	f.evidence.reason == "missing"
}

test_dep_ckpt_004_missing_directory_quiet_when_not_checkpointing if {
	overrides := object.union(_dep_t_off, {"execution.checkpointing.dir": dep.fx_default("execution.checkpointing.dir", null)})
	in19 := dep.fx_input(dep.fx_contract, overrides)
	count(dep.fx_of("SW-CKPT-004", deny)) == 0 with input as in19
}

# --- SW-CKPT-005 ---------------------------------------------------------------------------------

test_dep_ckpt_005_default_retention_with_a_rollback_window if {
	key := "execution.checkpointing.externalized-checkpoint-retention"
	in20 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, "no_externalized_checkpoints")})
	fs := deny with input as in20
	[f] := dep.fx_of("SW-CKPT-005", fs)
	f.line == 7
	contains(f.message, "retention.rollback_window is 3d")
}

test_dep_ckpt_005_declared_retention_without_a_window if {
	key := "execution.checkpointing.externalized-checkpoint-retention"
	contract := json.remove(dep.fx_contract, ["retention"])
	in21 := dep.fx_input(contract, {key: dep.fx_set(key, "delete_on_cancellation", 15)})
	fs := deny with input as in21
	[f] := dep.fx_of("SW-CKPT-005", fs)
	f.line == 15
	contains(f.message, "checkpoint.externalized retain_on_cancellation")
}

test_dep_ckpt_005_quiet_without_a_need if {
	key := "execution.checkpointing.externalized-checkpoint-retention"
	contract := json.remove(dep.fx_contract, ["retention", "checkpoint/externalized"])
	in22 := dep.fx_input(contract, {key: dep.fx_default(key, "no_externalized_checkpoints")})
	count(dep.fx_of("SW-CKPT-005", deny)) == 0 with input as in22
}

# --- SW-CKPT-006 ---------------------------------------------------------------------------------

test_dep_ckpt_006_fewer_retained_than_the_contract if {
	in23 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.num-retained": dep.fx_set("state.checkpoints.num-retained", 2, 16)})
	fs := warn with input as in23
	[f] := dep.fx_of("SW-CKPT-006", fs)
	f.line == 16
	f.evidence.required == 3
}

test_dep_ckpt_006_rollback_window_needs_two if {
	contract := json.remove(dep.fx_contract, ["retention/checkpoints", "checkpoint/num_retained"])
	key := "execution.checkpointing.num-retained"
	in24 := dep.fx_input(contract, {key: dep.fx_default(key, 1)})
	fs := warn with input as in24
	[f] := dep.fx_of("SW-CKPT-006", fs)
	f.evidence.required == 2
	contains(f.message, "Flink uses its default 1")
	in25 := dep.fx_input(contract, {key: dep.fx_set(key, 2, 16)})
	count(dep.fx_of("SW-CKPT-006", warn)) == 0 with input as in25
}

# --- SW-CKPT-007 ---------------------------------------------------------------------------------

test_dep_ckpt_007_at_least_once_with_exactly_once_sinks if {
	contract := json.remove(dep.fx_contract, ["checkpoint/mode"])
	in26 := dep.fx_input(contract, {"execution.checkpointing.mode": dep.fx_set("execution.checkpointing.mode", "at_least_once", 11)})
	fs := deny with input as in26
	[f] := dep.fx_of("SW-CKPT-007", fs)
	f.line == 11
	contains(f.message, "orders-table")
	count(dep.fx_of("SW-CKPT-003", fs)) == 0
}

test_dep_ckpt_007_quiet_without_exactly_once_sinks if {
	in27 := dep.fx_input(dep.fx_stateless, {"execution.checkpointing.mode": dep.fx_set("execution.checkpointing.mode", "at_least_once", 11)})
	fs := deny with input as in27
	count(dep.fx_of("SW-CKPT-007", fs)) == 0
}

# --- SW-CKPT-008 ---------------------------------------------------------------------------------

test_dep_ckpt_008_above_the_contract if {
	key := "execution.checkpointing.tolerable-failed-checkpoints"
	in28 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, 10, 20)})
	fs := warn with input as in28
	[f] := dep.fx_of("SW-CKPT-008", fs)
	f.line == 20
	contains(f.message, "above the contract's checkpoint.tolerable_failures 3")
}

test_dep_ckpt_008_unlimited_without_a_contract_value if {
	key := "execution.checkpointing.tolerable-failed-checkpoints"
	in29 := dep.fx_input(dep.fx_stateless, {key: dep.fx_set(key, 2147483647, 20)})
	fs := warn with input as in29
	[f] := dep.fx_of("SW-CKPT-008", fs)
	contains(f.message, "unlimited")
}

test_dep_ckpt_008_quiet_at_or_below_the_contract if {
	key := "execution.checkpointing.tolerable-failed-checkpoints"
	in30 := dep.fx_input(dep.fx_contract, {key: dep.fx_set(key, 3, 20)})
	count(dep.fx_of("SW-CKPT-008", warn)) == 0 with input as in30
	in31 := dep.fx_input(dep.fx_contract, {key: dep.fx_default(key, 0)})
	count(dep.fx_of("SW-CKPT-008", warn)) == 0 with input as in31
	contract := json.patch(dep.fx_contract, [{"op": "replace", "path": "/checkpoint/tolerable_failures", "value": -1}])
	in32 := dep.fx_input(contract, {key: dep.fx_set(key, 10, 20)})
	count(dep.fx_of("SW-CKPT-008", warn)) == 0 with input as in32
}

# --- SQL scripts with several jobs: each selected job is judged on what it sees ------------------

test_dep_ckpt_003_each_job_is_judged if {
	a := dep.fx_set("execution.checkpointing.interval", 60000, 1)
	b := dep.fx_set("execution.checkpointing.interval", 300000, 4)
	inp := dep.fx_jobs_input(dep.fx_contract, [
		[true, {"execution.checkpointing.interval": a}],
		[true, {"execution.checkpointing.interval": b}],
	])
	fs := deny with input as inp
	[f] := dep.fx_of("SW-CKPT-003", fs)
	f.line == 4
	f.value == 300000
}

test_dep_ckpt_003_a_job_not_selected_is_not_judged if {
	a := dep.fx_set("execution.checkpointing.interval", 60000, 1)
	b := dep.fx_set("execution.checkpointing.interval", 300000, 4)
	inp := dep.fx_jobs_input(dep.fx_contract, [
		[true, {"execution.checkpointing.interval": a}],
		[false, {"execution.checkpointing.interval": b}],
	])
	count(dep.fx_of("SW-CKPT-003", deny)) == 0 with input as inp
}

test_dep_ckpt_001_and_004_per_job if {
	# the first job does not checkpoint (SW-CKPT-001 there); the second checkpoints without a
	# directory (SW-CKPT-004 missing): each fact is taken from the job's own configuration
	off := dep.fx_default("execution.checkpointing.interval", null)
	no_dir := dep.fx_default("execution.checkpointing.dir", null)
	inp := dep.fx_jobs_input(dep.fx_contract, [
		[true, {"execution.checkpointing.interval": off, "execution.checkpointing.dir": no_dir}],
		[true, {"execution.checkpointing.dir": no_dir}],
	])
	fs := deny with input as inp
	count(dep.fx_of("SW-CKPT-001", fs)) == 1
	[missing] := [f | some f in dep.fx_of("SW-CKPT-004", fs); f.evidence.reason == "missing"]
	missing.path == "execution.checkpointing.dir"
}
