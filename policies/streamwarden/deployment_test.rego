# Tests of deployment.rego (SW-DEPLOY-*, helpers) and the fixtures the repository-side tests of
# checkpoint_deployment_test.rego and state_deployment_test.rego share (fx_*).
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

# --- SW-DEPLOY-001 -----------------------------------------------------------------------------

test_deploy_001_unknown_key_with_suggestion if {
	u := {"key": "execution.checkpointing.intervall", "file": "deploy/fd.yaml", "line": 30, "suggestion": "execution.checkpointing.interval"}
	in5 := fx_facts_input(fx_contract, {"unknown_keys": [u]})
	fs := warn with input as in5
	[f] := fx_of("SW-DEPLOY-001", fs)
	f.line == 30
	f.path == "execution.checkpointing.intervall"
	contains(f.message, "did you mean execution.checkpointing.interval?")
}

test_deploy_001_unknown_key_without_suggestion if {
	u := {"key": "foo.bar", "file": "deploy/job.sql", "line": 3}
	in6 := fx_facts_input(fx_contract, {"unknown_keys": [u]})
	fs := warn with input as in6
	[f] := fx_of("SW-DEPLOY-001", fs)
	not contains(f.message, "did you mean")
	f.file == "deploy/job.sql"
	# a key the job's own code reads: the message says how to declare it
	contains(f.message, "declare it in streamwarden.yaml (flink: {known_keys: [foo.bar]})")
}

test_deploy_001_quiet_without_unknown_keys if {
	in7 := fx_input(fx_contract, {})
	fs := warn with input as in7
	count(fx_of("SW-DEPLOY-001", fs)) == 0
}

# --- SW-DEPLOY-002 -----------------------------------------------------------------------------

fx_conflict := {
	"key": "execution.checkpointing.num-retained", "alias": "state.checkpoints.num-retained",
	"value": 5, "alias_value": 3, "raw": "5", "alias_raw": "3",
	"file": "deploy/config.yaml", "line": 4, "alias_file": "deploy/fd.yaml", "alias_line": 12,
	"wins": "execution.checkpointing.num-retained", "wins_by": "2.x-key",
}

test_deploy_002_says_which_value_flink_uses_and_why if {
	in8 := fx_facts_input(fx_contract, {"conflicts": [fx_conflict]})
	fs := warn with input as in8
	[f] := fx_of("SW-DEPLOY-002", fs)
	f.file == "deploy/fd.yaml"
	f.line == 12
	f.path == "execution.checkpointing.num-retained"
	contains(f.message, "Flink uses 5 from execution.checkpointing.num-retained")
	contains(f.message, "2.x key always takes precedence")
}

test_deploy_002_between_two_aliases if {
	c := object.union(fx_conflict, {"wins": "state.checkpoints.dir", "wins_by": "fallback-order", "key": "execution.checkpointing.dir"})
	in9 := fx_facts_input(fx_contract, {"conflicts": [c]})
	fs := warn with input as in9
	[f] := fx_of("SW-DEPLOY-002", fs)
	contains(f.message, "falls back to its deprecated keys in a fixed order, state.checkpoints.dir first")
}

# --- SW-DEPLOY-003 and 004 ---------------------------------------------------------------------

test_deploy_003_unparseable_value if {
	p := {
		"file": "deploy/fd.yaml", "line": 10, "code": "invalid-value", "severity": "error",
		"key": "execution.checkpointing.interval", "raw": "1h 30min",
		"message": "execution.checkpointing.interval: '1h 30min' is not a duration",
	}
	in10 := fx_facts_input(fx_contract, {"problems": [p]})
	fs := deny with input as in10
	[f] := fx_of("SW-DEPLOY-003", fs)
	f.line == 10
	f.value == "1h 30min"
	contains(f.message, "Flink would refuse to start the job")
	in11 := fx_facts_input(fx_contract, {"problems": [p]})
	count(fx_of("SW-DEPLOY-004", warn)) == 0 with input as in11
}

test_deploy_004_ambiguous_manifest_and_severity if {
	several := {"file": "deploy/all.yaml", "line": 20, "code": "several-resources", "severity": "warning", "message": "2 Flink resources"}
	docs := {"file": "deploy/config.yaml", "line": 9, "code": "several-documents", "severity": "error", "message": "2 YAML documents"}
	in12 := fx_facts_input(fx_contract, {"problems": [several, docs]})
	fs := warn with input as in12
	found := fx_of("SW-DEPLOY-004", fs)
	count(found) == 2
	{f.severity | some f in found} == {"warning", "error"}
	{f.path | some f in found} == {""}
}

test_deploy_rules_quiet_when_facts_unavailable if {
	in13 := fx_unavailable(fx_contract)
	count(fx_deployment_findings(warn)) == 0 with input as in13
	in14 := fx_unavailable(fx_contract)
	count(fx_deployment_findings(deny)) == 0 with input as in14
}

# --- SW-DEPLOY-005 -----------------------------------------------------------------------------

test_deploy_005_quiet_when_aligned if {
	in15 := fx_input(fx_contract, {})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as in15
}

test_deploy_005_backend_differs if {
	in16 := fx_input(fx_contract, {"state.backend.type": fx_set("state.backend", "hashmap", 21)})
	fs := deny with input as in16
	[f] := fx_of("SW-DEPLOY-005", fs)
	f.path == "state.backend.type"
	f.line == 21
	contains(f.message, "the contract says rocksdb (state.backend) but the repository sets state.backend (state.backend.type in Flink 2.x) to hashmap")
}

test_deploy_005_names_the_key_as_written_and_its_2x_name if {
	old := deny with input as fx_input(fx_contract, {"execution.checkpointing.dir": fx_set("state.checkpoints.dir", "s3://other/orders", 17)})
	[f] := fx_of("SW-DEPLOY-005", old)
	f.path == "execution.checkpointing.dir"
	f.evidence.deployment_key == "state.checkpoints.dir"
	contains(f.message, "sets state.checkpoints.dir (execution.checkpointing.dir in Flink 2.x) to s3://other/orders at ")
	new := deny with input as fx_input(fx_contract, {"execution.checkpointing.dir": fx_set("execution.checkpointing.dir", "s3://other/orders", 17)})
	[g] := fx_of("SW-DEPLOY-005", new)
	contains(g.message, "sets execution.checkpointing.dir to s3://other/orders at ")
	not contains(g.message, "in Flink 2.x")
}

test_deploy_005_default_backend_points_at_the_anchor if {
	in17 := fx_input(fx_contract, {"state.backend.type": fx_default("state.backend.type", "hashmap")})
	fs := deny with input as in17
	[f] := fx_of("SW-DEPLOY-005", fs)
	f.line == 7
	contains(f.message, "leaves state.backend.type unset, so Flink uses its default hashmap")
}

test_deploy_005_checkpoint_location_differs if {
	in18 := fx_input(fx_contract, {"execution.checkpointing.dir": fx_set("execution.checkpointing.dir", "s3://other/orders", 17)})
	fs := deny with input as in18
	[f] := fx_of("SW-DEPLOY-005", fs)
	f.path == "execution.checkpointing.dir"
	f.evidence.contract == "s3://lake-checkpoints/orders"
}

test_deploy_005_leaves_nondurable_and_missing_dirs_to_ckpt_004 if {
	local := fx_set("execution.checkpointing.dir", "file:///tmp/ckpt", 17)
	in19 := fx_input(fx_contract, {"execution.checkpointing.dir": local})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as in19
	missing := fx_default("execution.checkpointing.dir", null)
	in20 := fx_input(fx_contract, {"execution.checkpointing.dir": missing})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as in20
}

test_deploy_004_unreadable_flink_conf_line_and_skipped_resource if {
	line := {"file": "deploy/flink-conf.yaml", "line": 4, "code": "unreadable-line", "severity": "error", "message": "Flink 1.x cannot split"}
	skipped := {"file": "deploy/snap.yaml", "line": 19, "code": "skipped-resource", "severity": "info", "message": "FlinkStateSnapshot skipped"}
	in_skip := fx_facts_input(fx_contract, {"problems": [line, skipped]})
	found := fx_of("SW-DEPLOY-004", warn) with input as in_skip
	{[f.severity, f.value, f.line] | some f in found} == {["error", "unreadable-line", 4], ["info", "skipped-resource", 19]}
	count(fx_of("SW-DEPLOY-003", deny)) == 0 with input as in_skip
}

test_deploy_placeholder_value_is_not_judged if {
	# the backend is a placeholder: SW-DEPLOY-005 must not compare it with the contract
	e := {"value": null, "raw": "${BACKEND}", "key": "state.backend.type", "file": "deploy/c.yaml", "line": 3, "kind": "flink-config", "default": false, "placeholder": "${BACKEND}"}
	inp := fx_input(fx_contract, {"state.backend.type": e})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as inp
	count(settings("state.backend.type")) == 0 with input as inp
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

test_deploy_004_set_after_the_last_job if {
	p := {
		"file": "deploy/job.sql", "line": 12, "code": "set-after-last-job", "severity": "warning",
		"key": "execution.checkpointing.interval", "raw": "5min",
		"message": "SET execution.checkpointing.interval comes after the last job of the script",
	}
	inp := fx_facts_input(fx_contract, {"problems": [p]})
	[f] := fx_of("SW-DEPLOY-004", warn) with input as inp
	f.severity == "warning"
	f.value == "set-after-last-job"
	f.line == 12
	f.path == "execution.checkpointing.interval"
}
