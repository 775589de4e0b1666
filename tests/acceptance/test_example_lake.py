"""The README's first command on a real lake: scripts/make_example_lake.py builds the example tables
(a PyIceberg SQL catalog on SQLite, histories committed like the Iceberg Flink sink) in a copy of
contracts/examples, and `streamwarden check --env local` reads them with the embedded defaults
(regorus, the local catalog, a local Spark session).

The clean example must pass without a single finding; the broken ones must produce exactly the live
findings their header comments promise ("Findings expected from the live table (I) and its data
(S)"); no live fact may be missing (SW-FACT-001). The lake is built and checked once, as of one
fixed --now, so the history's age does not depend on how long the build takes.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.conftest import REPO, invoke
from tests.data_tables import spark  # noqa: F401  (the session fixture: the gatherer reuses it)

EXAMPLES = REPO / "contracts" / "examples"
SCRIPT = REPO / "scripts" / "make_example_lake.py"
LIVE_SOURCES = {"iceberg", "data"}
LIVE_HEADER = "Findings expected from the live table"
PIPELINES = ("orders-enrichment", "clickstream-sessions", "payments-cdc")


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home:
        return (Path(home) / "bin" / "java").exists()
    return shutil.which("java") is not None


def promised_live_rules(pipeline: str) -> Counter[str]:
    """The rule ids listed under the contract's "Findings expected from the live table" comment."""
    lines = (EXAMPLES / pipeline / "contract.yaml").read_text(encoding="utf-8").splitlines()
    out: Counter[str] = Counter()
    inside = False
    for line in lines:
        if not line.startswith("#"):
            break
        if LIVE_HEADER in line:
            inside = True
        elif inside and (m := re.match(r"^#\s+(SW-[A-Z]+-\d{3})\b", line)):
            out[m.group(1)] += 1
        elif inside and out and not re.match(r"^#\s{3,}", line):
            inside = False  # past the list: the next block of the header
    return out


def load_script() -> Any:
    spec = importlib.util.spec_from_file_location("make_example_lake", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lake(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of the examples with their lake built, and the --now it was built for."""
    if not java_available():
        pytest.skip("Java is not installed: the example check needs a local Spark session (install a JDK 17)")
    request.getfixturevalue("spark")  # one session for the whole test run, reused by the check
    root = tmp_path_factory.mktemp("example-lake") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert load_script().main(["--root", str(root), "--now", now]) == 0
    assert (root / ".lake" / "catalog.db").is_file()
    return root, now


@pytest.fixture(scope="module")
def report(lake: tuple[Path, str]) -> dict[str, Any]:
    root, now = lake
    with pytest.MonkeyPatch.context() as mp:
        # a check run stops the session it used at its end; this one belongs to the test run
        mp.setattr("streamwarden.facts.spark_data.stop_spark", lambda: None)
        result = invoke(CliRunner(), "check", "--env", "local", "--format", "json", "--now", now, cwd=root)
    assert result.exit_code == 1, result.output  # the broken examples fail the run
    doc: dict[str, Any] = json.loads(result.stdout)
    assert doc["errors"] == [], doc["errors"]
    return doc


def findings(doc: dict[str, Any], pipeline: str) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["pipeline"] == pipeline]


def live_rules(doc: dict[str, Any], pipeline: str) -> Counter[str]:
    return Counter(f["rule"] for f in findings(doc, pipeline) if f["source"] in LIVE_SOURCES)


def test_the_lake_holds_the_three_tables_with_the_contracts_schema(report: dict[str, Any]) -> None:
    assert {f["pipeline"] for f in report["findings"]} <= set(PIPELINES)
    assert report["summary"]["pipelines"] == 3


def test_the_clean_example_has_no_finding_at_all(report: dict[str, Any]) -> None:
    assert findings(report, "orders-enrichment") == []
    assert report["summary"]["passed"] == 1


def test_clickstream_sessions_produces_the_live_findings_its_header_promises(report: dict[str, Any]) -> None:
    promised = promised_live_rules("clickstream-sessions")
    assert promised == Counter({"SW-TABLE-007": 1, "SW-TABLE-012": 1, "SW-DATA-001": 1})
    assert live_rules(report, "clickstream-sessions") == promised
    by_rule = {f["rule"]: f for f in findings(report, "clickstream-sessions")}
    spark_snapshot = by_rule["SW-TABLE-012"]["evidence"]
    assert spark_snapshot["writer"] == "spark" and spark_snapshot["count"] == 1
    assert by_rule["SW-TABLE-007"]["evidence"]["snapshot_ids"] == spark_snapshot["snapshot_ids"]
    lag = by_rule["SW-DATA-001"]["evidence"]["lag_ms"]
    assert 30 * 60_000 < lag < 33 * 60_000  # the 30-minute session gap, plus at most a checkpoint


def test_payments_cdc_produces_the_live_findings_its_header_promises(report: dict[str, Any]) -> None:
    promised = promised_live_rules("payments-cdc")
    assert set(promised) == {"SW-TABLE-008", "SW-TABLE-011", "SW-DATA-002"}
    live = live_rules(report, "payments-cdc")
    assert set(live) == set(promised)
    assert live["SW-TABLE-008"] == 1 and live["SW-DATA-002"] == 1  # SW-TABLE-011: one finding a file
    by_rule = {f["rule"]: f for f in findings(report, "payments-cdc")}
    twice = by_rule["SW-TABLE-008"]["evidence"]["snapshot_ids"]
    files = [f for f in findings(report, "payments-cdc") if f["rule"] == "SW-TABLE-011"]
    assert all(sorted(f["evidence"]["snapshot_ids"]) == sorted(twice) for f in files)
    dupes = by_rule["SW-DATA-002"]["evidence"]
    assert dupes["duplicate_keys"] == dupes["duplicate_rows"] > 0  # each key of the checkpoint, twice


def test_no_live_fact_is_missing(report: dict[str, Any]) -> None:
    gaps = [f"{f['pipeline']}: {f['message']}" for f in report["findings"] if f["rule"] == "SW-FACT-001"]
    assert gaps == []


def test_a_real_check_process_keeps_spark_logging_off_stderr(lake: tuple[Path, str]) -> None:
    # A separate process starts its own Spark driver: its stderr is what a user sees.
    root, now = lake
    proc = subprocess.run(
        [sys.executable, "-m", "streamwarden.cli", "check", "--env", "local", "--now", now],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "3 pipelines:" in proc.stdout
    # the JVM's own notice about the vector module is printed before any configuration applies
    noise = [ln for ln in proc.stderr.splitlines() if ln.strip() and "Using incubator modules" not in ln]
    assert noise == [], proc.stderr
