"""`make demo` beyond the check: the savepoints recorded from a real Flink 2.3.0 job
(contracts/examples/orders-enrichment/savepoints, scripts/record_example_savepoints.py) inspected
and gated on the example lake, without a Flink cluster. The steps and their exit codes are read
from the Makefile's demo recipe and run through the real CLI in a copy of the examples whose lake
scripts/make_example_lake.py built (the check step is tests/acceptance/test_example_lake.py's, with Spark)."""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.test_example_lake import EXAMPLES, load_script
from tests.cli import Proc, sw
from tests.conftest import REPO

from streamwarden.flink.uids import operator_id

RECORDED = EXAMPLES / "orders-enrichment" / "savepoints"
STEP = re.compile(r"^\t\$\(call demo_step,(\d+),(.+)\)$", re.MULTILINE)


def demo_steps() -> list[tuple[int, list[str]]]:
    recipe = (REPO / "Makefile").read_text(encoding="utf-8").split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    return [(int(code), shlex.split(args)) for code, args in STEP.findall(recipe)]


def origin() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((RECORDED / "origin.json").read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("demo") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert load_script().main(["--root", str(root), "--now", now]) == 0
    return root, now


def run(root: Path, now: str, args: list[str], *extra: str) -> Proc:
    expanded = []
    for a in args:
        hits = sorted(root.glob(a)) if "*" in a else []
        assert not ("*" in a and len(hits) != 1), (a, hits)
        expanded.append(str(hits[0].relative_to(root)) if hits else a)
    if expanded[0] == "gate":
        expanded += ["--now", now]
    return sw(*expanded, *extra, cwd=root)


def test_the_recorded_savepoints_are_documented_with_their_origin() -> None:
    doc = origin()
    assert doc["flink_version"] == "2.3.0" and doc["command"] == "python scripts/record_example_savepoints.py"
    readme = (RECORDED / "README.md").read_text(encoding="utf-8")
    for case in ("before-rename", "dedup-typo"):
        rec = doc["savepoints"][case]
        assert (RECORDED / rec["directory"] / "_metadata").is_file()
        assert rec["job_id"] in readme and rec["directory"] in readme
        assert re.fullmatch(rf"{case}/savepoint-{rec['job_id'][:6]}-[0-9a-f]{{12}}", rec["directory"])
    assert "Flink: 2.3.0" in readme and "Recorded: " in readme and "tests/flink_jobs/orders_enrichment.py" in readme


def test_the_demo_runs_every_verb_with_the_exit_codes_the_makefile_expects() -> None:
    steps = demo_steps()
    assert [args[:2] for _, args in steps] == [
        ["savepoint", "inspect"],
        ["gate", "orders-enrichment"],
        ["gate", "orders-enrichment"],
        ["check", "--env"],
    ]
    assert [code for code, _ in steps] == [0, 0, 1, 1]


def test_inspect_shows_the_recorded_operators_matched_to_the_contract(lake: tuple[Path, str]) -> None:
    root, now = lake
    (code, args) = demo_steps()[0]
    p = run(root, now, args)
    assert p.code == code == 0, p
    doc = run(root, now, args, "--format", "json").json()
    assert doc["kind"] == "savepoint" and doc["version"] == 6 and doc["format"] == "canonical"
    assert doc["checkpoint_id"] == origin()["savepoints"]["before-rename"]["checkpoint_id"]
    matched = {op["uid"]: op["matched"]["uid"] for op in doc["operators"] if op["has_state"]}
    # the join ran as orders-join; the contract renamed it and claims the state with restores_from
    assert matched == {
        "orders-source": "orders-source",
        "customers-source": "customers-source",
        "orders-dedup": "orders-dedup",
        "orders-join": "orders-join",
    }
    assert doc["unmatched_stateful"] == []
    assert {op["max_parallelism"] for op in doc["operators"]} == {128}


def test_the_gate_allows_the_running_jobs_savepoint(lake: tuple[Path, str]) -> None:
    root, now = lake
    (code, args) = demo_steps()[1]
    p = run(root, now, args)
    assert p.code == code == 0, p
    assert p.stdout.startswith("gate: ALLOW orders-enrichment in local")
    doc = run(root, now, args, "--format", "json").json()
    assert doc["decision"] == "allow" and doc["reasons"] == [] and doc["warnings"] == []
    assert doc["sources"]["flink"] == {"configured": False, "available": False}  # not needed, not missing
    assert doc["sources"]["iceberg"] == {"configured": True, "available": True}
    rec = origin()["savepoints"]["before-rename"]
    table = doc["restore_from"]["table"]
    assert table["status"] == "behind" and table["duplicates"] is False  # the upsert sink replays harmlessly
    assert table["matching_snapshot"]["checkpoint_id"] == rec["checkpoint_id"]
    assert table["max_committed_checkpoint_id"] == rec["checkpoint_id"] + 3


def test_the_gate_denies_the_savepoint_whose_dedup_uid_the_contract_does_not_declare(lake: tuple[Path, str]) -> None:
    root, now = lake
    (code, args) = demo_steps()[2]
    p = run(root, now, args)
    assert p.code == code == 1, p
    assert p.stdout.startswith("gate: DENY orders-enrichment in local")
    doc = run(root, now, args, "--format", "json").json()
    assert doc["decision"] == "deny"
    (reason,) = doc["reasons"]
    assert reason["rule"] == "SW-STATE-009"
    assert reason["evidence"]["operator_id"] == operator_id("orders-dedupe")
    assert 'closest declared uid: "orders-dedup"' in reason["message"]


def test_the_markdown_gate_draws_the_recorded_timeline(lake: tuple[Path, str]) -> None:
    root, now = lake
    (_, args) = demo_steps()[1]
    md = run(root, now, args, "--format", "markdown").stdout
    rec = origin()["savepoints"]["before-rename"]
    block = md.split("```mermaid\n", 1)[1].split("\n```", 1)[0]
    assert f"savepoint of checkpoint {rec['checkpoint_id']}<br/>job {rec['job_id']}" in block
    assert [f"checkpoint {rec['checkpoint_id'] + i}" in block for i in (1, 2, 3)] == [True] * 3
    assert "optional: the sink is idempotent" in block
