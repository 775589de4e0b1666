"""A large check forks workers (run.run_check): the same report as one process, and, with custom
policies, the parent's compile of the whole policy set (done while the workers run) fails the run
cleanly when a file does not compile, with no worker left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT

DEPLOYMENT = "execution.checkpointing.interval: 90 s\nstate.backend.type: hashmap\n"


def _contracts(root: Path, n: int) -> Path:
    for i in range(n):
        name = f"pipeline-{i:02d}"
        text = CLEAN_CONTRACT.replace("orders-enrichment", name)
        text = text.replace(f"job:\n  name: {name}\n", f"job:\n  name: {name}\n  deployment: [deploy/flink.yaml]\n")
        if i % 3 == 0:
            text = text.replace("min_pause: 30s", "min_pause: 90s")
        d = root / "contracts" / name
        (d / "deploy").mkdir(parents=True)
        (d / "contract.yaml").write_text(text, encoding="utf-8")
        (d / "deploy" / "flink.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    return root


def test_workers_report_what_one_process_reports(tmp_path: Path) -> None:
    root = _contracts(tmp_path, 12)
    one = sw("check", "contracts", "--format", "json", "--no-cache", cwd=root, env={"STREAMWARDEN_WORKERS": "1"})
    two = sw("check", "contracts", "--format", "json", "--no-cache", cwd=root, env={"STREAMWARDEN_WORKERS": "2"})
    assert one.code == two.code == 1, (one, two)
    assert one.stdout == two.stdout
    assert one.json()["summary"]["pipelines"] == 12


# a custom policy the static check's documents never select (it needs live Flink facts): only the
# parent's compile of the whole set reads it
LIVE_POLICY = """package acme.live

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

deny contains f if {
	input.facts.flink.job.state == "failed"
	f := {"rule": "ACME-001", "message": "the job failed", "path": "job.name"}
}
"""

_BROKEN_COMPILE = (
    "import sys\n"
    "from streamwarden.core.errors import PolicyError\n"
    "import streamwarden.engine.regorus_engine as r\n"
    "import multiprocessing\n"
    "def broken(self):\n"
    "    sys.stderr.write('workers running: %d\\n' % len(multiprocessing.active_children()))\n"
    "    raise PolicyError('policy does not compile: unexpected token', file='pol/broken.rego', line=3)\n"
    "r.RegorusEngine.compile_all = broken\n"
    "from streamwarden.cli import main\n"
    "sys.argv = ['streamwarden', 'check', 'contracts', '--no-cache', '--format', 'json', *sys.argv[1:]]\n"
    "main()\n"
)


def _run_with_broken_compile(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "STREAMWARDEN_WORKERS": "2", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", _BROKEN_COMPILE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_a_policy_that_does_not_compile_fails_a_parallel_run_cleanly(tmp_path: Path) -> None:
    """With custom policies, the parent compiles the whole set after forking: its PolicyError ends
    the run (exit 2, the file named, no traceback), and the pool's workers are stopped."""
    root = _contracts(tmp_path, 8)
    (root / "pol").mkdir()
    (root / "pol" / "live.rego").write_text(LIVE_POLICY, encoding="utf-8")
    proc = _run_with_broken_compile(root, "--policy", "pol")
    # (a worker left running would hold the pipes open: the run would not end before the timeout)
    assert proc.returncode == 2, proc.stderr
    assert "workers running: 2" in proc.stderr  # compiled while the workers ran
    assert "pol/broken.rego:3" in proc.stderr and "does not compile" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""  # no report from the workers' results


def test_the_builtin_pack_alone_is_not_compiled_again_by_the_parent(tmp_path: Path) -> None:
    """Without custom policies the parent leaves the whole-set compile out (the built-in files are
    compiled together by the test suite; the workers compile what their documents select): the run
    reports its findings."""
    root = _contracts(tmp_path, 8)
    proc = _run_with_broken_compile(root)
    assert "workers running" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stderr  # the min_pause findings, from the workers
    assert '"rule": "SW-CKPT-002"' in proc.stdout


def test_chunks_shrink_towards_the_end_so_workers_finish_together() -> None:
    from streamwarden.check.workers import MIN_CHUNK, STATIC_CHUNK, _chunks

    for n, workers in ((12, 2), (200, 2), (1000, 2), (5000, 4)):
        files = [Path(f"c{i}.yaml") for i in range(n)]
        chunks = _chunks(files, workers)
        assert [f for c in chunks for f in c] == files  # every file once, in order
        sizes = [len(c) for c in chunks]
        assert sizes == sorted(sizes, reverse=True), sizes  # guided: never a larger chunk later
        assert max(sizes) <= 2 * STATIC_CHUNK
        assert all(s >= MIN_CHUNK for s in sizes[:-1]), sizes
        if n >= 1000:
            # the last chunk a worker takes is small: the others wait at most that long at the end
            assert sizes[-workers:] == [MIN_CHUNK] * (workers - 1) + [sizes[-1]], sizes
            assert sizes[0] > 4 * MIN_CHUNK  # and the first are large: few round trips
