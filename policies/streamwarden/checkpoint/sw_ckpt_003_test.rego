package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

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
