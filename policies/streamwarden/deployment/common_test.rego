# Tests of the deployment helpers, and the fixtures (fx_*) the repository-side tests of the
# checkpoint and state packages share.
package streamwarden.deployment

import rego.v1

# --- fixtures: a contract and a deployment that agree -----------------------------------------
# Tests bind an input built from these fixtures to a variable before `with input as`: regorus
# 0.13 leaves rules of this package undefined when the `with` value refers to one of its rules.

fx_contract := {
	"job": {
		"name": "orders-enrichment", "parallelism": 4, "max_parallelism": 128,
		"sinks": [{"name": "orders-table", "delivery": "exactly_once"}],
	},
	"state": {
		"backend": "rocksdb", "incremental": true, "max_size": 53687091200,
		"auto_generated_uids": "forbidden", "allow_non_restored_state": false,
		"operators": [{"uid": "orders-dedup", "kind": "keyed", "ttl": 86400000}],
	},
	"checkpoint": {
		"mode": "exactly_once", "interval": 60000, "timeout": 600000, "min_pause": 30000,
		"max_concurrent": 1, "storage": "s3://lake-checkpoints/orders", "externalized": "retain_on_cancellation",
		"num_retained": 3, "unaligned": false, "tolerable_failures": 3,
	},
	"retention": {"rollback_window": 259200000, "checkpoints": {"num_retained": 3}},
}

# A stateless pipeline without exactly-once sinks and without checkpoint or state sections.
fx_stateless := {"job": {"name": "stateless", "sinks": [{"name": "log", "delivery": "at_least_once"}]}}

fx_set(key, value, line) := {
	"value": value, "raw": sprintf("%v", [value]), "key": key, "file": "deploy/fd.yaml",
	"line": line, "kind": "flink-deployment", "default": false,
}

fx_default(key, value) := {
	"value": value, "raw": null, "key": key, "file": null, "line": null, "kind": null, "default": true,
}

fx_config := {
	"execution.checkpointing.interval": fx_set("execution.checkpointing.interval", 60000, 10),
	"execution.checkpointing.mode": fx_set("execution.checkpointing.mode", "exactly_once", 11),
	"execution.checkpointing.timeout": fx_set("execution.checkpointing.timeout", 600000, 12),
	"execution.checkpointing.min-pause": fx_set("execution.checkpointing.min-pause", 30000, 13),
	"execution.checkpointing.max-concurrent-checkpoints": fx_set("execution.checkpointing.max-concurrent-checkpoints", 1, 14),
	"execution.checkpointing.externalized-checkpoint-retention": fx_set("execution.checkpointing.externalized-checkpoint-retention", "retain_on_cancellation", 15),
	"execution.checkpointing.num-retained": fx_set("execution.checkpointing.num-retained", 3, 16),
	"execution.checkpointing.dir": fx_set("execution.checkpointing.dir", "s3://lake-checkpoints/orders/", 17),
	"execution.checkpointing.storage": fx_default("execution.checkpointing.storage", null),
	"execution.checkpointing.incremental": fx_set("execution.checkpointing.incremental", true, 18),
	"execution.checkpointing.unaligned.enabled": fx_set("execution.checkpointing.unaligned.enabled", false, 19),
	"execution.checkpointing.tolerable-failed-checkpoints": fx_set("execution.checkpointing.tolerable-failed-checkpoints", 3, 20),
	"state.backend.type": fx_set("state.backend.type", "rocksdb", 21),
	"pipeline.max-parallelism": fx_set("pipeline.max-parallelism", 128, 22),
	"pipeline.auto-generate-uids": fx_set("pipeline.auto-generate-uids", false, 23),
	"execution.state-recovery.ignore-unclaimed-state": fx_default("execution.state-recovery.ignore-unclaimed-state", false),
	"table.exec.state.ttl": fx_default("table.exec.state.ttl", 0),
}

fx_facts(config) := {
	"available": true, "configured": true,
	"files": [{"file": "deploy/fd.yaml", "kind": "flink-deployment"}],
	"anchor": {"file": "deploy/fd.yaml", "line": 7},
	"config": config, "job": {}, "jobs": [], "conflicts": [], "unknown_keys": [], "problems": [],
}

# fx_input(contract, overrides): the contract with the aligned deployment, some keys replaced.
fx_input(contract, overrides) := {
	"contract": contract,
	"facts": {"deployment": fx_facts(object.union(fx_config, overrides))},
	"now_ms": 1764000000000,
}

# fx_facts_input(contract, extra): the aligned deployment with other facts fields (conflicts, ...).
fx_facts_input(contract, extra) := {
	"contract": contract,
	"facts": {"deployment": object.union(fx_facts(fx_config), extra)},
	"now_ms": 1764000000000,
}

# fx_jobs_input(contract, jobs): a SQL script's jobs, each [selected, overrides of fx_config];
# facts.config is the first selected job's, as the gatherer builds it.
fx_jobs_input(contract, jobs) := {
	"contract": contract,
	"facts": {"deployment": object.union(
		fx_facts(object.union(fx_config, _fx_first_selected(jobs))),
		{"jobs": [{
			"file": "deploy/job.sql", "line": 10 * (i + 1), "kind": "insert", "name": null,
			"selected": j[0], "config": object.union(fx_config, j[1]),
		} |
			some i, j in jobs
		]},
	)},
	"now_ms": 1764000000000,
}

_fx_first_selected(jobs) := [j[1] | some j in jobs; j[0]][0]

fx_unavailable(contract) := {
	"contract": contract,
	"facts": {"deployment": {"available": false, "configured": true, "error": "deploy/fd.yaml: file does not exist"}},
	"now_ms": 1764000000000,
}

# Repository-sourced findings of one rule in a finding set.
fx_of(rule, findings) := [f | some f in findings; f.rule == rule; object.get(f, "source", "") == "deployment"]

fx_deployment_findings(findings) := [f | some f in findings; object.get(f, "source", "") == "deployment"]

# --- helpers -------------------------------------------------------------------------------------

test_settings_reads_entries_only_when_available if {
	in1 := fx_input(fx_contract, {})
	[e] := [x | some x in settings("execution.checkpointing.interval")] with input as in1
	e.value == 60000
	in2 := fx_unavailable(fx_contract)
	count(settings("execution.checkpointing.interval")) == 0 with input as in2
}

test_settings_skips_unparseable_values if {
	bad := object.union(fx_set("execution.checkpointing.interval", null, 10), {"error": "not a duration"})
	in3 := fx_input(fx_contract, {"execution.checkpointing.interval": bad})
	count(settings("execution.checkpointing.interval")) == 0 with input as in3
}

test_location_of_a_default_is_the_anchor if {
	in4 := fx_input(fx_contract, {})
	loc := location(fx_default("x", 1)) with input as in4
	loc == {"file": "deploy/fd.yaml", "line": 7}
	location(fx_set("x", 1, 12)) == {"file": "deploy/fd.yaml", "line": 12}
}

test_show_formats_durations_like_the_contract if {
	show(60000, "duration") == "1m"
	show(90000, "duration") == "90s"
	show(null, "duration") == "unset"
	show(true, "bool") == "true"
	origin(fx_default("x", 1)) == "Flink default (unset in the repository)"
	origin(fx_set("x", 1, 12)) == "deploy/fd.yaml:12 (x)"
}

test_nondurable_locations if {
	nondurable("file:///tmp/ckpt")
	nondurable("/var/flink/ckpt")
	not nondurable("s3://bucket/ckpt")
	not nondurable("hdfs:///flink/ckpt")
	same_location("s3://b/p/", "s3://b/p")
	backend_family("filesystem") == "hashmap"
	backend_family("rocksdb") == "rocksdb"
}

# --- SW-DEPLOY-002 -----------------------------------------------------------------------------

fx_conflict := {
	"key": "execution.checkpointing.num-retained", "alias": "state.checkpoints.num-retained",
	"value": 5, "alias_value": 3, "raw": "5", "alias_raw": "3",
	"file": "deploy/config.yaml", "line": 4, "alias_file": "deploy/fd.yaml", "alias_line": 12,
	"wins": "execution.checkpointing.num-retained", "wins_by": "2.x-key",
}

test_deploy_rules_quiet_when_facts_unavailable if {
	in13 := fx_unavailable(fx_contract)
	count(fx_deployment_findings(warn)) == 0 with input as in13
	in14 := fx_unavailable(fx_contract)
	count(fx_deployment_findings(deny)) == 0 with input as in14
}

test_deploy_placeholder_problem_is_an_info if {
	p := {"file": "deploy/job.sql", "line": 1, "code": "placeholder", "severity": "info", "key": "execution.runtime-mode", "raw": "$MODE", "message": "execution.runtime-mode is set to a placeholder"}
	inp := fx_facts_input(fx_contract, {"problems": [p]})
	[f] := fx_of("SW-DEPLOY-004", warn) with input as inp
	f.severity == "info"
	f.path == "execution.runtime-mode"
	count(fx_of("SW-DEPLOY-003", deny)) == 0 with input as inp
}

# --- SQL scripts with several jobs (facts.jobs) ---------------------------------------------------

test_views_are_the_selected_jobs_configurations if {
	a := fx_set("execution.checkpointing.interval", 60000, 1)
	b := fx_set("execution.checkpointing.interval", 300000, 4)
	c := fx_set("execution.checkpointing.interval", 1000, 7)
	inp := fx_jobs_input(fx_contract, [
		[true, {"execution.checkpointing.interval": a}],
		[true, {"execution.checkpointing.interval": b}],
		[false, {"execution.checkpointing.interval": c}],
	])
	vs := views with input as inp
	count(vs) == 2
	got := settings("execution.checkpointing.interval") with input as inp
	{e.value | some e in got} == {60000, 300000}
}

test_views_fall_back_to_config_without_jobs if {
	inp := fx_input(fx_contract, {})
	vs := views with input as inp
	count(vs) == 1
	vs[0]["execution.checkpointing.interval"].value == 60000
}
