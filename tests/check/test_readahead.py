"""One read per file: the deployment files discovery reads beside the contracts are parsed by the
deployment gatherer and hashed by the result cache from those bytes (the run's state: streamwarden.core.runstate), and a
later run in the same process reads them again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.check.test_result_cache import make_repo

# counts the opens of each deployment file while the real CLI runs, then prints them
_COUNT_OPENS = """
import json, os, sys
opened = {}
real_open = os.open
def counting_open(path, *args, **kwargs):
    name = os.fspath(path)
    if name.endswith("config.yaml"):
        opened[name] = opened.get(name, 0) + 1
    return real_open(path, *args, **kwargs)
os.open = counting_open
from streamwarden.cli import main
try:
    main(["check", "--format", "json", "--now", "2026-12-30T12:00:00Z", *sys.argv[1:]], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(opened), file=sys.stderr)
"""


def _opens(root: Path, *args: str) -> dict[str, int]:
    env = {**os.environ, "NO_COLOR": "1", "STREAMWARDEN_WORKERS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _COUNT_OPENS, *args], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [("--no-cache",), ("--cache", ".cache-dir")], ids=["no-cache", "cache-miss"])
def test_a_deployment_file_beside_the_contracts_is_read_once(tmp_path: Path, args: tuple[str, ...]) -> None:
    root = make_repo(tmp_path, n=2)
    opened = _opens(root, *args)
    # discovery reads it (is it a contract?); the gatherer parses and the cache hashes those bytes
    assert sorted(Path(p).relative_to(root.resolve()).as_posix() for p in opened) == [
        "contracts/p0/deploy/config.yaml",
        "contracts/p1/deploy/config.yaml",
    ]
    assert set(opened.values()) == {1}, opened


# two checks in one process, the deployment file edited in between
_TWICE = """
import json, sys
from pathlib import Path
from streamwarden.core import runstate
from streamwarden.cli import main
def rules():
    try:
        main(["check", "--no-cache", "--format", "json", "--output", "out.json",
              "--now", "2026-12-30T12:00:00Z"], standalone_mode=False)
    except SystemExit:
        pass
    return sorted({f["rule"] + " " + f["path"] for f in json.loads(Path("out.json").read_text())["findings"]})
first = rules()
left = len(runstate.current().read)
deploy = Path("contracts/p0/deploy/config.yaml")
deploy.write_text(deploy.read_text().replace("interval: 60 s", "interval: 90 s"))
print(json.dumps({"first": first, "second": rules(), "left": left}))
"""


def test_a_later_run_in_the_same_process_reads_the_file_again(tmp_path: Path) -> None:
    root = make_repo(tmp_path, n=1)
    env = {**os.environ, "NO_COLOR": "1", "STREAMWARDEN_WORKERS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _TWICE], cwd=root, capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["left"] == 0  # forgotten at the end of the run
    interval = "SW-CKPT-003 execution.checkpointing.interval"
    assert interval not in out["first"], out
    assert interval in out["second"], out  # the edited interval differs from the contract's 60s


@pytest.mark.parametrize("args", [("--no-cache",), ("--cache", ".cache-dir")], ids=["no-cache", "cache"])
def test_a_pull_request_reads_each_contract_it_leaves_as_it_is_once(tmp_path: Path, args: tuple[str, ...]) -> None:
    """The base side reads a work-tree contract to compare its blob id with the merge base's; the
    check of the head takes those bytes (a contract the pull request changes is read again)."""
    from tests.conftest import CLEAN_CONTRACT
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/*.yaml"]\n')
    for i in range(3):
        repo.write(f"contracts/p{i}.config.yaml", CLEAN_CONTRACT.replace("orders-enrichment", f"p-{i}"))
    repo.commit("base")
    repo.branch("feature")
    changed = CLEAN_CONTRACT.replace("orders-enrichment", "p-1").replace("min_pause: 30s", "min_pause: 90s")
    repo.write("contracts/p1.config.yaml", changed)
    repo.commit("the pull request")
    opened = _opens(repo.path, *args, "--base", "main")
    by_name = {Path(p).name: n for p, n in opened.items()}
    assert by_name == {"p0.config.yaml": 1, "p1.config.yaml": 2, "p2.config.yaml": 1}, opened
