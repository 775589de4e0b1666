"""SARIF: valid for the SARIF multitool with GitHub's ingestion rules, a descriptor per rule, the
finding's own file and line, fingerprints that survive unrelated edits, suppressions, truncation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CLEAN_CONTRACT, REPO
from tests.reporting import EXAMPLES, findings_json, run_check, validate_sarif

from streamwarden.core.errors import InputError
from streamwarden.engine.policyset import RuleDescriptor
from streamwarden.evaluate.findings import Finding
from streamwarden.report import Report
from streamwarden.report.sarif import FINGERPRINT_KEY, build_sarif, rule_name


def sarif_of(*args: str, cwd: Path = REPO) -> dict[str, Any]:
    result = run_check(*args, "--format", "sarif", cwd=cwd)
    assert result.exit_code in (0, 1), result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


@pytest.fixture(scope="module")
def examples() -> tuple[dict[str, Any], dict[str, Any]]:
    return sarif_of(*EXAMPLES), findings_json(*EXAMPLES)


def finding(i: int, **kw: Any) -> Finding:
    base: dict[str, Any] = {
        "pipeline": "p",
        "rule": "SW-CKPT-004",
        "severity": "error",
        "title": "Checkpoint storage must be durable",
        "message": f"finding {i}",
        "file": "contracts/p.yaml",
        "line": i + 1,
        "path": f"x[{i}]",
        "fingerprint": f"{i:016x}",
    }
    base.update(kw)
    return Finding(**base)


def test_examples_sarif_passes_the_multitool_with_github_rules_and_the_schema(
    examples: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    sarif, _ = examples
    path = tmp_path / "examples.sarif"
    path.write_text(json.dumps(sarif), encoding="utf-8")
    assert validate_sarif(path, tmp_path) == []


def test_the_validators_are_not_vacuous(examples: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path) -> None:
    no_location = json.loads(json.dumps(examples[0]))
    no_location["runs"][0]["results"][0]["locations"] = []
    path = tmp_path / "no-location.sarif"
    path.write_text(json.dumps(no_location), encoding="utf-8")
    assert any(p.startswith("GH") for p in validate_sarif(path, tmp_path))  # GitHub's ingestion rules ran
    # the multitool silently skips a file that does not deserialize: the JSON Schema catches it
    bad_level = json.loads(json.dumps(examples[0]))
    bad_level["runs"][0]["results"][1]["level"] = "fatal"
    path = tmp_path / "bad-level.sarif"
    path.write_text(json.dumps(bad_level), encoding="utf-8")
    assert any("'fatal' is not one of" in p for p in validate_sarif(path, tmp_path))


def test_every_catalog_rule_has_one_descriptor_with_help_text(examples: tuple[dict[str, Any], dict[str, Any]]) -> None:
    from streamwarden.engine import load_policy_set

    driver = examples[0]["runs"][0]["tool"]["driver"]
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    assert set(load_policy_set().rules) <= set(ids)
    for r in driver["rules"]:
        assert r["shortDescription"]["text"]
        assert r["help"]["text"] and r["help"]["markdown"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert r["name"][0].isupper() and r["name"].isalnum()


def test_results_match_the_json_findings_rule_file_line_and_fingerprint(
    examples: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    sarif, doc = examples
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert len(results) == len(doc["findings"]) > 0
    for r, f in zip(results, doc["findings"], strict=True):
        assert r["ruleId"] == f["rule"]
        assert rules[r["ruleIndex"]]["id"] == f["rule"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f["file"]
        assert not loc["artifactLocation"]["uri"].startswith("/")
        assert loc["region"]["startLine"] == f["line"]
        assert r["partialFingerprints"][FINGERPRINT_KEY].split(":")[0] == f["fingerprint"]
        assert r["level"] == {"error": "error", "warning": "warning", "info": "note"}[f["severity"]]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert "contracts/examples/clickstream-sessions/deploy/flink-conf.yaml" in uris  # a repository-file culprit


def test_partial_fingerprints_survive_an_unrelated_edit_that_moves_every_line(tmp_path: Path) -> None:
    contract = CLEAN_CONTRACT.replace(
        "interval: 60s\n  timeout: 10m\n  min_pause: 30s", "interval: 60s\n  timeout: 10m\n  min_pause: 90s"
    )
    (tmp_path / "contracts").mkdir()
    target = tmp_path / "contracts" / "orders.yaml"
    target.write_text(contract, encoding="utf-8")
    first = sarif_of("contracts", cwd=tmp_path)["runs"][0]["results"]
    again = sarif_of("contracts", cwd=tmp_path)["runs"][0]["results"]
    target.write_text("# owned by payments-data\n# reviewed 2026-11\n\n" + contract, encoding="utf-8")
    moved = sarif_of("contracts", cwd=tmp_path)["runs"][0]["results"]
    assert first, "the edited contract must produce a finding"
    prints = [r["partialFingerprints"] for r in first]
    assert prints == [r["partialFingerprints"] for r in again]
    assert prints == [r["partialFingerprints"] for r in moved]
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in first]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in moved] == [n + 3 for n in lines]


def test_uris_are_repository_relative_when_the_config_lives_in_a_subdirectory() -> None:
    sarif = sarif_of(cwd=REPO / "contracts" / "examples")  # its streamwarden.yaml is the root
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert uris and all(u.startswith("contracts/examples/") for u in uris), uris


def test_waived_finding_carries_an_external_suppression_with_the_reason(
    examples: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    results = examples[0]["runs"][0]["results"]
    waived = [r for r in results if r.get("suppressions")]
    assert len(waived) == sum(1 for f in examples[1]["findings"] if f["waived"]) == 1
    (s,) = waived[0]["suppressions"]
    assert s["kind"] == "external"
    assert s["justification"].startswith("Local checkpoints while the S3 bucket is provisioned")
    assert s["properties"] == {"expires": "2027-01-31", "approved_by": "data-platform"}


def test_more_than_5000_findings_keep_the_most_severe_and_say_how_many_were_left_out() -> None:
    findings = [finding(i, severity="warning") for i in range(4998)]
    findings += [finding(5000 + i, severity="error", rule="SW-X-00" + str(i)) for i in range(5)]
    report = Report(findings=findings, pipelines=["p"])
    run = build_sarif(report)["runs"][0]
    assert len(run["results"]) == 5000
    assert sum(1 for r in run["results"] if r["level"] == "error") == 5
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("3 of 5003 findings were left out" in n["message"]["text"] for n in notes)
    assert run["properties"]["truncated"] is True and run["properties"]["resultsLeftOut"] == 3


def test_the_cli_warns_on_stderr_when_sarif_is_truncated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamwarden.report.sarif as sarif_module

    monkeypatch.setattr(sarif_module, "MAX_RESULTS", 2)
    result = run_check(*EXAMPLES, "--report", f"sarif={tmp_path / 'x.sarif'}", "--format", "json")
    assert "SARIF holds the 2 most severe of" in result.stderr


def test_custom_rule_without_metadata_gets_a_descriptor_and_repeated_fingerprints_are_numbered() -> None:
    twins = [
        finding(1, rule="ACME-001", title="ACME-001", fingerprint="aa"),
        finding(2, rule="ACME-001", title="ACME-001", fingerprint="aa"),
    ]
    rules = {
        "SW-CKPT-004": RuleDescriptor(id="SW-CKPT-004", title="Checkpoint storage must be durable", severity="error")
    }
    run = build_sarif(Report(findings=twins, pipelines=["p"], rules=rules))["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["ACME-001", "SW-CKPT-004"]
    assert [r["partialFingerprints"][FINGERPRINT_KEY] for r in run["results"]] == ["aa", "aa:2"]


def test_baseline_state_is_set_only_when_a_baseline_was_applied() -> None:
    fs = [finding(1), finding(2)]
    fs[0].baselined = True
    plain = build_sarif(Report(findings=fs, pipelines=["p"]))["runs"][0]["results"]
    assert all("baselineState" not in r for r in plain)
    with_baseline = build_sarif(Report(findings=fs, pipelines=["p"], baseline="b.json"))["runs"][0]["results"]
    assert [r["baselineState"] for r in with_baseline] == ["unchanged", "new"]


def test_unusable_inputs_are_error_notifications_and_the_run_is_not_successful() -> None:
    err = InputError("not valid YAML", file="contracts/bad.yaml", line=3)
    run = build_sarif(Report(findings=[], pipelines=[], errors=[err]))["runs"][0]
    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "contracts/bad.yaml"


def test_rule_names_are_pascal_case_identifiers() -> None:
    assert rule_name("Checkpoint storage must be durable", "SW-CKPT-004") == "CheckpointStorageMustBeDurable"
    assert rule_name("", "ACME-001") == "Acme001"


def test_sarif_written_with_report_flag_equals_format_sarif(tmp_path: Path) -> None:
    target = tmp_path / "out.sarif"
    result = run_check(*EXAMPLES, "--report", f"sarif={target}")
    assert result.exit_code == 1
    assert json.loads(target.read_text(encoding="utf-8")) == sarif_of(*EXAMPLES)


def test_locations_are_normalized_under_the_repository_prefix_and_outside_paths_stay_as_given() -> None:
    report = Report(findings=[], pipelines=[], repo_prefix="contracts/examples")
    assert report.repo_path("orders/contract.yaml") == "contracts/examples/orders/contract.yaml"
    assert report.repo_path("../shared/deploy.yaml") == "contracts/shared/deploy.yaml"
    assert report.repo_path("../../../elsewhere.yaml") == "../../../elsewhere.yaml"
    assert report.repo_path("/abs/contract.yaml") == "/abs/contract.yaml"
    sarif = build_sarif(Report(findings=[finding(1, file="/abs/my contract.yaml")], pipelines=["p"]))
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file:///abs/my%20contract.yaml"
