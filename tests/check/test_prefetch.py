"""The result cache's dependency states hashed by a forked child (cache.StatePrefetch) while the run
finishes its base and loads the pack: the same states each lookup would hash, never those of the
files the run read itself, and no answer (the run hashes on its own) when the child is late, fails
or answers something that is not a state. Through the real CLI: a warm run whose globs name only
the contracts opens no deployment file in its own process, and reports what a run without the
child reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.check.test_result_cache import make_repo, stats
from tests.cli import sw
from tests.conftest import NOW

from streamwarden.check.cache import ResultCache, StatePrefetch, file_state, key, newest_pack
from streamwarden.check.cache import prefetch as prefetch_module
from streamwarden.check.cache.key import _sha
from streamwarden.core import runstate
from streamwarden.yamlsafe.read import MAX_BYTES

pytestmark = pytest.mark.skipif(
    not hasattr(os, "fork") or (os.cpu_count() or 1) < 2, reason="the child is forked (POSIX, two cores or more)"
)


@pytest.fixture(autouse=True)
def _small_packs_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """These repositories are small: a pack of a few entries starts a child here."""
    monkeypatch.setattr(prefetch_module, "PREFETCH_MIN_PACK", 0)


def _configured(tmp_path: Path, n: int = 3) -> Path:
    """A repository whose configuration names only the contracts: discovery reads no deployment file."""
    root = make_repo(tmp_path, n=n)
    (root / "streamwarden.yaml").write_text('contracts: ["contracts/**/contract.yaml"]\n', encoding="utf-8")
    return root


def _filled(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A configured repository, its cache directory after one run, and the dependencies its pack names."""
    root = _configured(tmp_path)
    p = sw("check", "--format", "json", "--now", NOW, cwd=root)
    assert p.code in (0, 1), p
    directory = root / ".streamwarden-cache"
    pack = newest_pack(directory)
    assert pack is not None
    entries = json.loads(pack.read_text(encoding="utf-8"))["entries"]
    deps = sorted({d[0] for e in entries.values() for d in e["deps"]})
    assert len(deps) == 3 and all(d.endswith("deploy/config.yaml") for d in deps)
    return root, directory, deps


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_child_answers_the_state_each_lookup_would_hash(tmp_path: Path) -> None:
    _, directory, deps = _filled(tmp_path)
    prefetch = StatePrefetch.start(directory)
    assert prefetch is not None
    pid = prefetch._pid
    assert prefetch.take() == {d: file_state(d) for d in deps}
    assert pid is not None and _gone(pid)
    assert prefetch.take() == {}  # taken once


def test_a_file_larger_than_a_contract_may_be_is_left_to_the_run(tmp_path: Path) -> None:
    # the child hashes what the lookups would, but not a file over the size limit (the run's own
    # read refuses it) and answers missing and other files as file_state does
    _, directory, deps = _filled(tmp_path)
    with open(deps[0], "r+b") as fh:
        fh.truncate(MAX_BYTES + 1)
    os.unlink(deps[1])
    prefetch = StatePrefetch.start(directory)
    assert prefetch is not None
    assert prefetch.take() == {deps[1]: "missing", deps[2]: file_state(deps[2])}
    assert file_state(deps[0]) != key._TOO_LARGE  # without a limit: hashed as ever


def test_a_file_the_run_has_read_is_hashed_from_those_bytes(tmp_path: Path) -> None:
    _, directory, deps = _filled(tmp_path)
    read = deps[0]
    with runstate.begin() as state:
        state.keep({read: b"the bytes this run parsed"})
        prefetch = StatePrefetch.start(directory)
        assert prefetch is not None
        answer = prefetch.take()
        assert read not in answer and set(answer) == set(deps[1:])
        # the lookups: readahead first, then the child's answer, else the file now
        results = ResultCache(directory, key.Context(key="k"), lambda rule: (rule, ""))
        results.use_prefetched({**answer, read: "0" * 64, "/nowhere/else.yaml": "1" * 64})
        assert results.state(read) == _sha(read, b"the bytes this run parsed")
        assert results.state(deps[1]) == file_state(deps[1])
        assert results.state("/nowhere/else.yaml") == "1" * 64


def test_a_late_child_is_no_answer_and_is_not_left_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, directory, _ = _filled(tmp_path)

    def slow(pack: Path) -> dict[str, str]:
        time.sleep(30)
        return {}

    monkeypatch.setattr(prefetch_module, "_dependency_states", slow)
    prefetch = StatePrefetch.start(directory)
    assert prefetch is not None
    pid = prefetch._pid
    started = time.monotonic()
    assert prefetch.take(wait=0.3) == {}
    assert time.monotonic() - started < 10
    assert pid is not None and _gone(pid)


@pytest.mark.parametrize(
    "answer",
    [
        {"/a/deploy/config.yaml": "not a state"},
        {"/a/deploy/config.yaml": 7},
        ["/a/deploy/config.yaml"],
    ],
    ids=["text", "number", "list"],
)
def test_an_answer_that_is_not_states_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: object
) -> None:
    _, directory, _ = _filled(tmp_path)
    monkeypatch.setattr(prefetch_module, "_dependency_states", lambda pack: answer)
    prefetch = StatePrefetch.start(directory)
    assert prefetch is not None
    assert prefetch.take() == {}


def test_a_child_that_fails_is_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, directory, _ = _filled(tmp_path)

    def broken(pack: Path) -> dict[str, str]:
        raise RuntimeError("boom")

    monkeypatch.setattr(prefetch_module, "_dependency_states", broken)
    prefetch = StatePrefetch.start(directory)
    assert prefetch is not None
    pid = prefetch._pid
    assert prefetch.take() == {}
    assert pid is not None and _gone(pid)


def test_no_pack_or_a_small_one_no_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert StatePrefetch.start(tmp_path / "no-cache-yet") is None
    _, directory, _ = _filled(tmp_path)
    monkeypatch.setattr(prefetch_module, "PREFETCH_MIN_PACK", 64 * 1024)  # the default: a pack of 200 entries or so
    assert StatePrefetch.start(directory) is None


# the real CLI with the child's threshold lowered to this small repository; counts the opens of
# each deployment file by the check's own process (the child's are its own)
_RUN = """
import json, os, sys
import streamwarden.check.cache.prefetch
streamwarden.check.cache.prefetch.PREFETCH_MIN = int(sys.argv[1])
streamwarden.check.cache.prefetch.PREFETCH_MIN_PACK = 0
parent, opened = os.getpid(), []
real_open = os.open
def counting_open(path, *args, **kwargs):
    if os.getpid() == parent and os.fspath(path).endswith("config.yaml"):
        opened.append(os.fspath(path))
    return real_open(path, *args, **kwargs)
os.open = counting_open
from streamwarden.cli import main
try:
    main(["check", "-v", "--format", "json", "--output", sys.argv[2], "--now", sys.argv[3], *sys.argv[4:]],
         standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(opened), file=sys.stderr)
"""


def _run(root: Path, threshold: int, out: str, *args: str) -> tuple[list[str], str]:
    # as users run it: self-check mode (the suite's default) would evaluate every hit again
    env = {**os.environ, "NO_COLOR": "1", "STREAMWARDEN_WORKERS": "1", "STREAMWARDEN_SELF_CHECK": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, str(threshold), out, NOW, *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    return json.loads(lines[-1]), proc.stderr


def test_a_warm_run_opens_no_deployment_file_and_reports_the_same(tmp_path: Path) -> None:
    root = _configured(tmp_path)
    cold, _ = _run(root, 1, "cold.json")
    assert len(set(cold)) == 3  # the first run hashes and reads each deployment file
    with_child, log = _run(root, 1, "with-child.json")
    assert with_child == [], with_child  # the child hashed them
    assert "cache 3 hits, 0 misses" in log, log
    without, log = _run(root, 10**9, "without.json")
    assert len(without) == 3 and "cache 3 hits, 0 misses" in log, (without, log)
    assert (root / "with-child.json").read_bytes() == (root / "without.json").read_bytes()
    # a deployment file edited since: the child's state differs from the entry's, a miss
    deploy = root / "contracts" / "p1" / "deploy" / "config.yaml"
    deploy.write_text(deploy.read_text().replace("60 s", "90 s"), encoding="utf-8")
    _, log = _run(root, 1, "edited.json")
    assert "cache 2 hits, 1 miss" in log, log
    p = sw("check", "-v", "--format", "json", "--now", NOW, cwd=root)
    assert stats(p) == (3, 0) and p.stdout == (root / "edited.json").read_text(encoding="utf-8")
