package streamwarden.facts

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- quiet cases

test_fact001_not_configured_is_quiet if {
	inp := lib.example_input
	findings := warn with input as inp
	count(findings) == 0
}

test_fact001_available_is_quiet if {
	inp := {"facts": _t_facts(_t_ok)}
	findings := warn with input as inp
	count(findings) == 0
}

test_fact001_without_facts_is_quiet if {
	findings := warn with input as {"contract": {}}
	count(findings) == 0
}

# ---------------------------------------------------------------- SW-FACT-001

test_fact001_configured_but_unavailable_warns if {
	inp := {"facts": _t_facts(_t_broken)}
	findings := warn with input as inp
	count(findings) == 1
	some f in findings
	f == {
		"rule": "SW-FACT-001",
		"message": "flink facts could not be gathered: GET /jobs/overview: connection refused; rules that need them were not evaluated",
		"path": "facts.flink",
		"value": "flink",
		"evidence": {"source": "flink", "error": "GET /jobs/overview: connection refused"},
	}
}

test_fact001_is_an_error_in_the_gate if {
	inp := {"facts": _t_facts(_t_broken), "mode": "gate"}
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-FACT-001"
	f.path == "facts.flink"
	f.severity == "error"
}

test_fact001_other_modes_keep_the_warning if {
	inp := {"facts": _t_facts(_t_broken), "mode": "check"}
	findings := warn with input as inp
	some f in findings
	f.rule == "SW-FACT-001"
	not f.severity
}

test_fact001_one_finding_per_source if {
	inp := {"facts": {
		"deployment": {"available": false, "configured": true, "error": "deploy/x.yaml: not found"},
		"flink": _t_broken,
		"iceberg": {"available": false, "configured": true},
		"data": _t_quiet,
		"savepoint": _t_ok,
	}}
	findings := warn with input as inp
	lib.rule_paths(findings, "SW-FACT-001") == {"facts.deployment", "facts.flink", "facts.iceberg"}
	some f in findings
	f.path == "facts.iceberg"
	f.evidence.error == null
	contains(f.message, "iceberg facts could not be gathered: no error was reported")
}

test_fact001_blank_error_text if {
	inp := {"facts": _t_facts({"available": false, "configured": true, "error": " "})}
	findings := warn with input as inp
	some f in findings
	contains(f.message, "no error was reported")
}

test_fact001_ignores_malformed_sources if {
	inp := {"facts": {"flink": "unreachable", "iceberg": null}}
	findings := warn with input as inp
	count(findings) == 0
}

test_fact001_no_missing_file_no_error if {
	inp := {"contract": _t_deploy_contract(["deploy/ok.yaml"]), "facts": _t_deploy_facts(_t_ok)}
	count(deny) == 0 with input as inp
}

test_fact001_missing_file_is_an_error_at_its_entry if {
	deployment := object.union(_t_ok, {"missing": [_t_missing_b]})
	inp := {"contract": _t_deploy_contract(["deploy/ok.yaml", "deploy/missing.yaml"]), "facts": _t_deploy_facts(deployment)}
	findings := deny with input as inp
	findings == {{
		"rule": "SW-FACT-001",
		"severity": "error",
		"message": "job.deployment[1] names deploy/missing.yaml, which does not exist (contracts/deploy/missing.yaml); the deployment rules cannot check it: fix the path (relative to the contract's directory) or add the file",
		"path": "job.deployment[1]",
		"value": "deploy/missing.yaml",
		"evidence": {"source": "deployment", "entry": "deploy/missing.yaml", "file": "contracts/deploy/missing.yaml", "error": "file does not exist"},
	}}

	# the rest was read: no gap for the source as a whole
	count(warn) == 0 with input as inp
}

test_fact001_missing_file_is_an_error_outside_the_gate_too if {
	deployment := object.union(_t_ok, {"missing": [_t_missing_b]})
	inp := {"facts": _t_deploy_facts(deployment), "mode": "check"}
	some f in deny with input as inp
	f.severity == "error"
}

test_fact001_missing_file_in_the_gate if {
	deployment := object.union(_t_ok, {"missing": [_t_missing_b]})
	inp := {"facts": _t_deploy_facts(deployment), "mode": "gate"}
	lib.rule_paths(deny, "SW-FACT-001") == {"job.deployment[1]"} with input as inp
}

test_fact001_every_file_missing_is_one_error_each_and_no_source_gap if {
	a := {"index": 0, "entry": "a.yaml", "file": "contracts/a.yaml"}
	b := {"index": 1, "entry": "b.sql", "file": "contracts/b.sql"}
	deployment := {
		"available": false, "configured": true,
		"error": "contracts/a.yaml: file does not exist; contracts/b.sql: file does not exist",
		"missing": [a, b],
	}
	inp := {"contract": _t_deploy_contract(["a.yaml", "b.sql"]), "facts": _t_deploy_facts(deployment)}
	lib.rule_paths(deny, "SW-FACT-001") == {"job.deployment[0]", "job.deployment[1]"} with input as inp
	count(warn) == 0 with input as inp
}

test_fact001_missing_file_beside_an_unreadable_one_reports_both if {
	bad := {"index": 0, "entry": "deploy/bad.yaml", "file": "contracts/deploy/bad.yaml", "error": "contracts/deploy/bad.yaml:4: not valid YAML"}
	deployment := {
		"available": false, "configured": true,
		"error": "contracts/deploy/missing.yaml: file does not exist; contracts/deploy/bad.yaml:4: not valid YAML",
		"missing": [_t_missing_b],
		"unreadable": [bad],
	}
	inp := {"contract": _t_deploy_contract(["deploy/bad.yaml", "deploy/missing.yaml"]), "facts": _t_deploy_facts(deployment)}
	lib.rule_paths(deny, "SW-FACT-001") == {"job.deployment[0]", "job.deployment[1]"} with input as inp
	some f in deny with input as inp
	f.path == "job.deployment[0]"
	contains(f.message, "contracts/deploy/bad.yaml:4: not valid YAML")

	# both entries are accounted for: no second, source-wide gap
	count(warn) == 0 with input as inp
}

test_fact001_unreadable_file_is_an_error_at_its_entry_beside_readable_facts if {
	deployment := object.union(_t_ok, {"unreadable": [_t_unreadable_a]})
	inp := {"contract": _t_deploy_contract(["../x.yaml", "deploy/ok.yaml"]), "facts": _t_deploy_facts(deployment)}
	findings := deny with input as inp
	findings == {{
		"rule": "SW-FACT-001",
		"severity": "error",
		"message": "job.deployment[0] names ../x.yaml, which cannot be read: ../x.yaml is outside the repository; deployment files must live in the repository; the deployment rules cannot check it: fix the file or the entry",
		"path": "job.deployment[0]",
		"value": "../x.yaml",
		"evidence": {"source": "deployment", "entry": "../x.yaml", "file": "../x.yaml", "error": _t_unreadable_a.error},
	}}
	count(warn) == 0 with input as inp
}

test_fact001_unreadable_file_is_an_error_outside_the_gate_too if {
	deployment := object.union(_t_ok, {"unreadable": [_t_unreadable_a]})
	some f in deny with input as {"facts": _t_deploy_facts(deployment), "mode": "check"}
	f.severity == "error"
}

test_fact001_every_file_unreadable_is_one_error_each_and_no_source_gap if {
	deployment := {"available": false, "configured": true, "error": _t_unreadable_a.error, "unreadable": [_t_unreadable_a]}
	inp := {"contract": _t_deploy_contract(["../x.yaml"]), "facts": _t_deploy_facts(deployment)}
	lib.rule_paths(deny, "SW-FACT-001") == {"job.deployment[0]"} with input as inp
	count(warn) == 0 with input as inp
}

test_fact001_unreadable_without_the_contract_still_reports_the_source if {
	deployment := {"available": false, "configured": true, "error": "x", "unreadable": [_t_unreadable_a], "missing": [_t_missing_b]}
	inp := {"contract": _t_deploy_contract(["../x.yaml", "deploy/missing.yaml", "deploy/third.yaml"]), "facts": _t_deploy_facts(deployment)}
	lib.rule_paths(warn, "SW-FACT-001") == {"facts.deployment"} with input as inp
	count(deny) == 2 with input as inp
}

test_fact001_missing_list_without_the_contract_still_reports_the_source if {
	# the source-level gap is left out only when every entry of job.deployment is missing
	deployment := {"available": false, "configured": true, "error": "x: file does not exist", "missing": [_t_missing_b]}
	inp := {"facts": _t_deploy_facts(deployment)}
	lib.rule_paths(warn, "SW-FACT-001") == {"facts.deployment"} with input as inp
	count(deny) == 1 with input as inp
}

test_fact001_missing_only_concerns_deployment if {
	flink := object.union(_t_broken, {"missing": [_t_missing_b]})
	inp := {"contract": _t_deploy_contract(["deploy/missing.yaml"]), "facts": _t_facts(flink)}
	lib.rule_paths(warn, "SW-FACT-001") == {"facts.flink"} with input as inp
	count(deny) == 0 with input as inp
}

test_fact001_unavailable_but_not_refused_still_warns if {
	inp := {"facts": {"iceberg": object.union(_t_refused, {"refused": false})}}
	some f in warn with input as inp
	f.rule == "SW-FACT-001"
	f.path == "facts.iceberg"
}

# ---------------------------------------------------------------- SW-FACT-001: a backfill's manifests

_t_backfill(rng) := {"iceberg": {"available": true, "configured": true, "backfills": {"branches": {}, "walk": 10000, "items": [{
	"path": "fork_of", "kind": "backfill", "job": "orders-backfill", "job_ids": ["bf"], "branch": "b",
	"wap_id": null, "identified": true, "matched": 1, "snapshots": [], "snapshots_truncated": 0, "range": rng,
}]}}}

_t_unread := {"column": "event_time", "declared_from": "2025-07-01", "declared_to": "2025-10-01", "checked": false, "reason": null, "error": "snapshot 7: FileNotFoundError"}

test_fact001_unreadable_backfill_manifest_warns_at_its_range if {
	findings := warn with input as {"facts": _t_backfill(_t_unread), "mode": "check"}
	[f] := [x | some x in findings]
	f.path == "fork_of.range"
	f.value == "iceberg"
	f.message == `iceberg facts could not be gathered: the manifests of backfill "orders-backfill" (declared at fork_of) could not be read (snapshot 7: FileNotFoundError); SW-TABLE-015 could not judge its range`
	not f.severity
}

test_fact001_unreadable_backfill_manifest_is_an_error_in_the_gate if {
	findings := warn with input as {"facts": _t_backfill(_t_unread), "mode": "gate"}
	[f] := [x | some x in findings]
	f.severity == "error"
}

test_fact001_unreadable_backfill_names_job_ids_without_a_job_name if {
	facts := json.patch(_t_backfill(_t_unread), [{"op": "replace", "path": "/iceberg/backfills/items/0/job", "value": null}])
	findings := warn with input as {"facts": facts, "mode": "check"}
	[f] := [x | some x in findings]
	contains(f.message, "the manifests of backfill bf (declared at fork_of)")
}

test_fact001_backfill_range_read_or_absent_is_quiet if {
	ok := object.union(_t_unread, {"checked": true, "error": null})
	count(warn) == 0 with input as {"facts": _t_backfill(ok), "mode": "check"}
	count(warn) == 0 with input as {"facts": _t_backfill(null), "mode": "check"}
}
