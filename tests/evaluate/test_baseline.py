"""Baselines: an existing repository adopts the tool; only findings not in the baseline fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CLEAN_CONTRACT
from tests.reporting import run_check

from streamwarden.core.errors import InputError, UsageError
from streamwarden.evaluate.baseline import Baseline, apply_baseline, baseline_document, load_baseline
from streamwarden.evaluate.findings import Finding, exit_code, summarize

# an existing repository: two findings (min_pause not below interval; file:// checkpoints)
LEGACY = CLEAN_CONTRACT.replace("min_pause: 30s", "min_pause: 60s").replace(
    "storage: s3://lake-checkpoints/orders-enrichment", "storage: file:///var/flink/ckpt"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "streamwarden.yaml").write_text('contracts: ["contracts/**/*.yaml"]\n', encoding="utf-8")
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "orders.yaml").write_text(LEGACY, encoding="utf-8")
    return tmp_path


def check(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_check("--format", "json", *args, cwd=repo)
    assert result.exit_code in (0, 1, 2), result.output
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


def test_write_baseline_records_the_findings_and_that_run_passes(repo: Path) -> None:
    code, doc = check(repo, "--write-baseline", "baseline.json")
    assert code == 0
    written = json.loads((repo / "baseline.json").read_text(encoding="utf-8"))
    assert written["version"] == 1
    assert sorted(e["rule"] for e in written["findings"]) == ["SW-CKPT-002", "SW-CKPT-004"]
    assert {e["fingerprint"] for e in written["findings"]} == {f["fingerprint"] for f in doc["findings"]}
    assert all("line" not in e for e in written["findings"])  # lines move; fingerprints do not


def test_a_baseline_run_passes_on_existing_findings_and_still_reports_them(repo: Path) -> None:
    assert check(repo)[0] == 1  # without the baseline the repository fails
    check(repo, "--write-baseline", "baseline.json")
    code, doc = check(repo, "--baseline", "baseline.json")
    assert code == 0
    findings = doc["findings"]
    assert len(findings) == 2 and all(f["baselined"] for f in findings)
    assert doc["summary"]["errors"] == 0 and doc["summary"]["baselined"] == 2


def test_a_new_finding_fails_a_baseline_run_and_only_it_counts(repo: Path) -> None:
    check(repo, "--write-baseline", "baseline.json")
    contract = repo / "contracts" / "orders.yaml"
    contract.write_text(contract.read_text(encoding="utf-8").replace("  owner: payments-data\n", ""), encoding="utf-8")
    code, doc = check(repo, "--baseline", "baseline.json")
    assert code == 1
    new = [f for f in doc["findings"] if not f.get("baselined")]
    assert [f["rule"] for f in new] == ["SW-REC-001"]
    assert doc["summary"]["warnings"] + doc["summary"]["errors"] == 1


def test_an_unrelated_edit_that_moves_lines_keeps_the_baseline_valid(repo: Path) -> None:
    check(repo, "--write-baseline", "baseline.json")
    contract = repo / "contracts" / "orders.yaml"
    contract.write_text("# reviewed by the platform team\n\n" + contract.read_text(encoding="utf-8"), encoding="utf-8")
    assert check(repo, "--baseline", "baseline.json")[0] == 0


def test_a_changed_offending_value_is_a_new_finding(repo: Path) -> None:
    check(repo, "--write-baseline", "baseline.json")
    contract = repo / "contracts" / "orders.yaml"
    contract.write_text(
        contract.read_text(encoding="utf-8").replace("file:///var/flink/ckpt", "file:///tmp/ckpt"), encoding="utf-8"
    )
    code, doc = check(repo, "--baseline", "baseline.json")
    assert code == 1
    assert [f["rule"] for f in doc["findings"] if not f.get("baselined")] == ["SW-CKPT-004"]


def test_fixed_findings_are_reported_as_stale_baseline_entries(repo: Path) -> None:
    check(repo, "--write-baseline", "baseline.json")
    contract = repo / "contracts" / "orders.yaml"
    contract.write_text(
        contract.read_text(encoding="utf-8").replace("min_pause: 60s", "min_pause: 30s"), encoding="utf-8"
    )
    result = run_check("--baseline", "baseline.json", cwd=repo)
    assert result.exit_code == 0
    assert "1 baseline entry matches no finding any more" in result.stderr


def test_waived_findings_are_never_written_to_a_baseline() -> None:
    waived = Finding("p", "SW-X-1", "error", "t", "m", "c.yaml", 1, "a", fingerprint="aa", waived=True)
    kept = Finding("p", "SW-X-2", "error", "t", "m", "c.yaml", 2, "b", fingerprint="bb")
    assert [e["fingerprint"] for e in baseline_document([waived, kept])["findings"]] == ["bb"]
    # and a baseline never hides a finding whose waiver was applied (nor one it has not seen)
    result = apply_baseline([waived, kept], Baseline("b.json", {"aa", "bb", "cc"}))
    assert (waived.baselined, kept.baselined) == (False, True)
    assert (result.matched, result.stale) == (1, 2)
    assert exit_code([waived, kept], "error") == 0


def test_a_findings_document_works_as_a_baseline_without_its_waived_entries(tmp_path: Path) -> None:
    doc = {"version": 1, "findings": [{"fingerprint": "aa", "waived": True}, {"fingerprint": "bb", "waived": False}]}
    path = tmp_path / "findings.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert load_baseline(str(path)).fingerprints == {"bb"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "baseline is not valid JSON"),
        ('{"findings": {}}', 'a JSON object with a "findings" list'),
        ('{"version": 7, "findings": []}', "unsupported baseline version 7"),
        ('{"findings": [{"rule": "SW-X"}]}', 'baseline entry 0 has no "fingerprint"'),
    ],
)
def test_an_unusable_baseline_is_an_input_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_baseline(str(path))


def test_a_missing_baseline_exits_2_with_a_hint(repo: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_baseline(str(repo / "nope.json"))
    result = run_check("--baseline", "nope.json", cwd=repo)
    assert result.exit_code == 2
    assert "baseline file does not exist" in result.stderr and "--write-baseline" in result.stderr


def test_with_base_the_baseline_comes_from_the_trusted_ref_so_a_pull_request_cannot_accept_its_own_findings(
    tmp_path: Path,
) -> None:
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    repo.write("contracts/orders.yaml", LEGACY)
    check(repo.path, "--write-baseline", "baseline.json")
    repo.commit("adopt streamwarden with a baseline")
    repo.branch("feature")
    contract = repo.path / "contracts" / "orders.yaml"
    contract.write_text(LEGACY.replace("  owner: payments-data\n", ""), encoding="utf-8")
    check(repo.path, "--write-baseline", "baseline.json")  # the pull request baselines its new finding too
    repo.commit("drop the owner, and hide it")
    assert check(repo.path, "--baseline", "baseline.json")[0] == 0  # without --base it would pass
    result = run_check("--base", "main", "--baseline", "baseline.json", "--format", "json", cwd=repo.path)
    assert result.exit_code == 1
    new = [f["rule"] for f in json.loads(result.stdout)["findings"] if not f.get("baselined")]
    assert "SW-REC-001" in new
    assert "1 baseline entry in baseline.json not on main is not applied" in result.stderr


def test_a_baseline_that_only_the_pull_request_adds_applies_nothing(tmp_path: Path) -> None:
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    repo.write("contracts/orders.yaml", LEGACY)
    repo.commit("base")
    repo.branch("feature")
    check(repo.path, "--write-baseline", "baseline.json")
    repo.commit("add a baseline")
    result = run_check("--base", "main", "--baseline", "baseline.json", cwd=repo.path)
    assert result.exit_code == 1, result.output
    assert "2 baseline entries in baseline.json not on main are not applied" in result.stderr


def test_the_summary_counts_each_finding_once() -> None:
    """Waived first, then baselined, else by severity; a pipeline passes unless it has a counted
    error or warning (an info, a waived or a baselined finding does not fail it)."""

    def f(pipeline: str, severity: str, waived: bool = False, baselined: bool = False) -> Finding:
        return Finding(pipeline, "R", severity, "", "", None, None, "", waived=waived, baselined=baselined)

    findings = [
        f("a", "error"),
        f("a", "warning"),
        f("b", "error", waived=True, baselined=True),
        f("b", "warning", baselined=True),
        f("c", "info"),
        f("c", "error", waived=True),
        f("d", "warning"),
    ]
    assert summarize(findings, ["a", "b", "c", "d", "e"]) == {
        "pipelines": 5,
        "errors": 1,
        "warnings": 2,
        "infos": 1,
        "waived": 2,
        "baselined": 1,
        "passed": 3,
    }
