package streamwarden.deployment

import rego.v1

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

test_deploy_004_unreadable_flink_conf_line_and_skipped_resource if {
	line := {"file": "deploy/flink-conf.yaml", "line": 4, "code": "unreadable-line", "severity": "error", "message": "Flink 1.x cannot split"}
	skipped := {"file": "deploy/snap.yaml", "line": 19, "code": "skipped-resource", "severity": "info", "message": "FlinkStateSnapshot skipped"}
	in_skip := fx_facts_input(fx_contract, {"problems": [line, skipped]})
	found := fx_of("SW-DEPLOY-004", warn) with input as in_skip
	{[f.severity, f.value, f.line] | some f in found} == {["error", "unreadable-line", 4], ["info", "skipped-resource", 19]}
	count(fx_of("SW-DEPLOY-003", deny)) == 0 with input as in_skip
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
