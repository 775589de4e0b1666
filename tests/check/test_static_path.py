"""A static check never starts a JVM: a real `streamwarden` process (validate, check, check --base,
diff, facts on repository files) must not import pyspark, py4j, pyarrow or pyiceberg.

The modules are read from the process itself at exit, so an `import pyarrow` anywhere on the path a
static run takes (run.py, a gatherer, a reporter) fails this test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

HEAVY = ("pyspark", "py4j", "pyarrow", "pyiceberg")

TRACE = f"""
import atexit, json, runpy, sys
HEAVY = {HEAVY!r}
out = sys.argv[1]
def _report():
    with open(out, "w") as fh:
        json.dump(sorted({{m.split(".")[0] for m in sys.modules if m.split(".")[0] in HEAVY}}), fh)
atexit.register(_report)
sys.argv = ["streamwarden", *sys.argv[2:]]
runpy.run_module("streamwarden.cli", run_name="__main__")
"""


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("job:\n", "job:\n  deployment: [deploy.yaml]\n", 1))
    r.write(
        "contracts/deploy.yaml",
        "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: orders}\n"
        "spec:\n  flinkConfiguration:\n    execution.checkpointing.interval: 60s\n",
    )
    r.commit("base")
    r.branch("feature")
    r.write("contracts/orders.yaml", (r.path / "contracts/orders.yaml").read_text().replace("60s", "45s"))
    r.commit("faster checkpoints")
    return r


@pytest.mark.parametrize(
    "args",
    [
        ("validate",),
        ("check", "--now", NOW),
        ("check", "--base", "main", "--now", NOW, "--format", "sarif"),
        ("diff", "--base", "main", "--now", NOW),
        ("facts", "orders-enrichment", "--now", NOW),
    ],
    ids=["validate", "check", "check-base-sarif", "diff", "facts"],
)
def test_a_static_run_imports_no_jvm_or_arrow_module(repo: Repo, tmp_path: Path, args: tuple[str, ...]) -> None:
    out = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", TRACE, str(out), *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert json.loads(out.read_text()) == [], f"a static {args[0]} imported {out.read_text()}"


def test_the_trace_sees_a_heavy_import(tmp_path: Path) -> None:
    """The probe itself works: a process that imports pyarrow is reported."""
    pytest.importorskip("pyarrow")
    out = tmp_path / "modules.json"
    code = TRACE.replace('runpy.run_module("streamwarden.cli", run_name="__main__")', "import pyarrow")
    subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, timeout=60, check=True)
    assert json.loads(out.read_text()) == ["pyarrow"]
