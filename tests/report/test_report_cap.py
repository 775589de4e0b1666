"""A report lists at most 20 findings of one rule in one file, then one finding that counts the
rest, in every format; the summary, the exit code, the baseline and waivers see every finding.

The files are the kind the issue measured, smaller: a legacy flink-conf.yaml with a line per
unknown key (SW-DEPLOY-001 for each), and a config.yaml whose keys are one flow mapping on one
line. Every test runs the real CLI.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW, REPO

FINDINGS_SCHEMA = REPO / "contracts" / "schema" / "streamwarden-findings.v1.schema.json"
UNKNOWN = 45  # SW-DEPLOY-001 findings in flink-conf.yaml: 20 listed, 25 counted by one more
LISTED = 20  # findings.MAX_PER_RULE_FILE, the documented cap
SETTINGS = (
    "execution.checkpointing.interval: 60 s\n"
    "execution.checkpointing.timeout: 10 min\n"
    "execution.checkpointing.min-pause: 30 s\n"
    "execution.checkpointing.dir: s3://lake-checkpoints/orders-enrichment\n"
    "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION\n"
    "execution.checkpointing.num-retained: 3\n"
    "execution.checkpointing.tolerable-failed-checkpoints: 3\n"
    "execution.checkpointing.incremental: true\n"
    "state.backend.type: rocksdb\n"
    "pipeline.auto-generate-uids: false\n"
    "pipeline.max-parallelism: 128\n"
    "parallelism.default: 4\n"
    "restart-strategy.type: exponential-delay\n"
    "table.exec.state.ttl: 24 h\n"
)


def _conf(unknown: int = UNKNOWN) -> str:
    return SETTINGS + "".join(f"acme.custom-key-{i}: value-{i}\n" for i in range(unknown))


def _repo(root: Path, files: dict[str, str], contract: str = CLEAN_CONTRACT) -> Path:
    names = ", ".join(f"../{n}" for n in files)
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(
        contract.replace("job:\n", f"job:\n  deployment: [{names}]\n", 1), encoding="utf-8"
    )
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def _check(root: Path, *args: str) -> Proc:
    return sw("check", "--no-cache", "--now", NOW, *args, cwd=root)


def _deploy_001(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == "SW-DEPLOY-001"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _repo(tmp_path_factory.mktemp("cap"), {"flink-conf.yaml": _conf()})


def test_json_lists_20_then_one_finding_counting_the_rest(repo: Path) -> None:
    p = _check(repo, "--format", "json", "--fail-on", "warning")
    assert p.code == 1, p
    doc = p.json()
    ours = _deploy_001(doc["findings"])
    listed = [f for f in ours if "more" not in f]
    [more] = [f for f in ours if "more" in f]
    assert len(listed) == LISTED
    assert [f["line"] for f in listed] == list(range(15, 35))  # the first 20, in file order
    assert more["more"] == {
        "findings": 25,
        "errors": 0,
        "warnings": 25,
        "infos": 0,
        "waived": 0,
        "baselined": 0,
    }, more
    assert more["severity"] == "warning" and more["file"] == "flink-conf.yaml" and more["line"] == 35
    assert "25 more SW-DEPLOY-001 findings in flink-conf.yaml (lines 35 to 59) not listed" in more["message"]
    # the summary counts every finding, the ones not listed too
    assert doc["summary"]["warnings"] == UNKNOWN and len(doc["findings"]) == 21, doc["summary"]
    # the counting finding is part of the published findings document
    jsonschema.validate(doc, json.loads(FINDINGS_SCHEMA.read_text(encoding="utf-8")))


def test_every_format_lists_the_same_21(repo: Path) -> None:
    sarif = json.loads(_check(repo, "--format", "sarif").stdout)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "SW-DEPLOY-001"]
    assert len(results) == 21 and sum("more" in r["properties"] for r in results) == 1
    assert sarif["runs"][0]["properties"]["summary"]["warnings"] == UNKNOWN

    junit = ET.fromstring(_check(repo, "--format", "junit", "--fail-on", "warning").stdout)
    cases = [c for c in junit.iter("testcase") if c.get("name", "").startswith("SW-DEPLOY-001")]
    assert len(cases) == 21 and all(c.find("failure") is not None for c in cases)

    github = _check(repo, "--format", "github").stdout
    annotations = [line for line in github.splitlines() if line.startswith("::warning ") and "SW-DEPLOY-001" in line]
    assert len(annotations) == 21 and sum("25 more SW-DEPLOY-001 findings" in a for a in annotations) == 1

    markdown = _check(repo, "--format", "markdown").stdout
    rows = [line for line in markdown.splitlines() if line.startswith("| `SW-DEPLOY-001`")]
    assert len(rows) == 21 and sum("25 more SW-DEPLOY-001 findings" in r for r in rows) == 1
    warnings = re.search(r"\*\*Warnings \((\d+)\)\*\*", markdown)
    assert warnings and int(warnings.group(1)) == UNKNOWN, markdown  # what the rows stand for

    text = _check(repo, "--format", "text").stdout
    assert len(re.findall(r"^  warning SW-DEPLOY-001 ", text, re.M)) == 21
    assert "25 more SW-DEPLOY-001 findings in flink-conf.yaml" in text


def test_exit_code_and_summary_are_those_of_every_finding(repo: Path) -> None:
    """A summary line and an exit code per --fail-on, as if nothing were capped: the counting
    finding fails a run exactly when one of the findings it counts would."""
    p = _check(repo, "--format", "text", "--fail-on", "warning")
    assert p.code == 1
    assert "1 pipeline: 0 passed, 0 errors, 45 warnings, 0 waived" in p.stdout, p.stdout
    assert _check(repo, "--format", "text", "--fail-on", "error").code == 0  # only warnings here


def test_the_baseline_records_and_accepts_every_finding(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"flink-conf.yaml": _conf()})
    written = _check(root, "--write-baseline", "baseline.json", "--format", "json")
    assert written.code == 0, written
    entries = json.loads((root / "baseline.json").read_text())["findings"]
    assert len(_deploy_001(entries)) == UNKNOWN  # every finding, the ones not listed too
    accepted = _check(root, "--baseline", "baseline.json", "--format", "json", "--fail-on", "warning")
    assert accepted.code == 0, accepted
    [more] = [f for f in _deploy_001(accepted.json()["findings"]) if "more" in f]
    assert more["baselined"] is True and more["more"]["baselined"] == 25
    assert accepted.json()["summary"]["baselined"] == UNKNOWN
    # a new unknown key after the baseline: listed (findings that count come first) and failing
    (root / "flink-conf.yaml").write_text(_conf() + "acme.brand-new: x\n", encoding="utf-8")
    new = _check(root, "--baseline", "baseline.json", "--format", "json", "--fail-on", "warning")
    assert new.code == 1, new
    listed = [f for f in _deploy_001(new.json()["findings"]) if "more" not in f]
    assert [f["path"] for f in listed if not f.get("baselined")] == ["acme.brand-new"]
    assert new.json()["summary"]["warnings"] == 1


def test_a_waiver_covers_the_findings_not_listed(tmp_path: Path) -> None:
    waived = CLEAN_CONTRACT + (
        "waivers:\n  - rule: SW-DEPLOY-001\n    reason: acme keys are read by our own plugin\n"
        "    expires: 2027-01-01\n    approved_by: platform-team\n"
    )
    root = _repo(tmp_path, {"flink-conf.yaml": _conf()}, waived)
    p = _check(root, "--format", "json", "--fail-on", "warning")
    assert p.code == 0, p
    [more] = [f for f in _deploy_001(p.json()["findings"]) if "more" in f]
    assert more["waived"] is True and more["more"]["waived"] == 25
    assert p.json()["summary"]["waived"] == UNKNOWN


def test_a_one_line_flow_mapping_gives_each_key_its_value_and_is_capped(tmp_path: Path) -> None:
    """The issue's other file, smaller: every key of a one-line flow mapping, its own value."""
    keys = 2_000
    flow = "{" + ", ".join(f"acme.k{i}: {i}" for i in range(keys)) + "}\n"
    root = _repo(tmp_path, {"config.yaml": flow})
    facts = sw("facts", "orders-enrichment", "--now", NOW, cwd=root).json()["facts"]["deployment"]
    assert all(facts["config"][f"acme.k{i}"]["value"] == str(i) for i in range(keys))
    assert len(facts["unknown_keys"]) == keys
    ours = _deploy_001(_check(root, "--format", "json").json()["findings"])
    assert len(ours) == 21 and ours[-1]["more"]["findings"] == keys - 20
