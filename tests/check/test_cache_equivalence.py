"""The result cache never changes an answer (issue 27, point 1).

Every verb that reads the cache is `check` (plain, and with `--base` for a pull request; `diff`
never opens it), in each of its formats, run on a real git repository with a pull request that
changes, rewords, adds and removes contracts beside ones it leaves as they are (a clean one, one
with a waiver in force, one with an expired waiver):

- without the cache (the reference);
- cold: an empty cache;
- warm: the same cache again, an hour later;
- warm after a plain `check` (no `--base`) seeded the cache, two hours later.

The outputs (stdout, the job summary of `--format github`, stderr, the exit code) are the same
byte for byte, apart from one clock field: ``now_ms``, the time a run evaluated at, which an
expired waiver's finding shows in its evidence (JSON, SARIF and JUnit print it). Each run's own
time is put back to a placeholder there, and nowhere else.

The product runs with self-check mode off (it would evaluate each hit again, the path users do
not run); a last warm run in self-check mode must say the same and find no difference.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT
from tests.gitrepo import Repo

from streamwarden.report import FORMATS

T0, T1, T2 = "2026-11-25T12:00:00Z", "2026-11-25T13:00:00Z", "2026-11-25T14:00:00Z"
NOW_MS = {T0: 1795608000000, T1: 1795611600000, T2: 1795615200000}
HASHMAP = ("  backend: rocksdb", "  backend: hashmap")  # SW-STATE-002
IN_FORCE = "waivers:\n  - {rule: SW-STATE-002, reason: migration, expires: 2027-06-30, approved_by: platform}\n"
EXPIRED = "waivers:\n  - {rule: SW-STATE-002, reason: migration, expires: 2026-10-01, approved_by: platform}\n"
DEPLOYMENT = "execution.checkpointing.interval: 60 s\nstate.backend.type: rocksdb\npipeline.max-parallelism: 128\n"
CUSTOM = textwrap.dedent(
    """\
    package acme.naming

    import rego.v1

    # METADATA
    # title: Pipelines are named after their team
    # custom:
    #   id: ACME-001
    #   severity: warning
    warn contains f if {
    \tnot startswith(input.contract.metadata.name, "p")
    \tf := {"rule": "ACME-001", "message": "not a team name", "path": "metadata.name"}
    }
    """
)


def _contract(name: str, *subs: tuple[str, str], extra: str = "") -> str:
    text = CLEAN_CONTRACT.replace("orders-enrichment", name)
    for old, new in subs:
        text = text.replace(old, new)
    return text + extra


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = Repo(tmp_path_factory.mktemp("equivalence") / "repo")
    repo.write(".gitignore", ".streamwarden-cache/\ncaches/\n")
    repo.write("streamwarden.yaml", "policies: [policies]\n")
    repo.write("policies/naming.rego", CUSTOM)
    deploy = ("  name: p0\n  parallelism", "  name: p0\n  deployment: [deploy/p0.yaml]\n  parallelism")
    repo.write("contracts/p0.yaml", _contract("p0", deploy))  # unchanged, with a deployment file
    repo.write("contracts/deploy/p0.yaml", DEPLOYMENT)
    repo.write("contracts/p1.yaml", _contract("p1", HASHMAP, extra=IN_FORCE))  # unchanged, waived
    repo.write("contracts/p2.yaml", _contract("p2", HASHMAP, extra=EXPIRED))  # unchanged, expired waiver
    for name in ("p3", "p4", "p5"):
        repo.write(f"contracts/{name}.yaml", _contract(name))
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/p3.yaml", _contract("p3", ("max_parallelism: 128", "max_parallelism: 256")))  # changed
    repo.write("contracts/p4.yaml", "# reworded\n" + _contract("p4"))  # reworded
    repo.remove("contracts/p5.yaml")  # removed
    repo.write("contracts/p6.yaml", _contract("p6"))  # added
    repo.commit("the pull request")
    return repo


@dataclass(frozen=True)
class Answer:
    code: int
    stdout: str
    summary: str  # the job summary --format github writes
    stderr: str  # without the progress and timing lines of -v
    hits: int | None


_STATS = re.compile(r"cache (\d+) hits?, (\d+) miss")


def _check(repo: Repo, fmt: str, now: str, *args: str, cache: str | None, self_check: str = "0") -> Answer:
    summary = repo.path.parent / f"summary-{fmt}.md"
    summary.unlink(missing_ok=True)
    env = {"STREAMWARDEN_SELF_CHECK": self_check, "GITHUB_STEP_SUMMARY": str(summary)}
    where = ("--cache", cache) if cache is not None else ("--no-cache",)
    p = sw("check", "-v", "--format", fmt, "--now", now, *where, *args, cwd=repo.path, env=env)
    assert p.code in (0, 1), p
    kept = [
        ln for ln in p.stderr.splitlines() if not ln.startswith(("streamwarden: checking", "streamwarden: checked"))
    ]
    m = _STATS.search(p.stderr)
    written = summary.read_text(encoding="utf-8") if summary.exists() else ""
    return Answer(
        code=p.code,
        stdout=_clock(p.stdout, now),
        summary=_clock(written, now),
        stderr="\n".join(kept),
        hits=int(m.group(1)) if m else None,
    )


def _clock(text: str, now: str) -> str:
    """The one clock field: ``now_ms`` (as JSON writes it: the JSON and SARIF reports, the JUnit
    report's evidence text) holding the run's own time."""
    return text.replace(f'"now_ms": {NOW_MS[now]}', '"now_ms": "<now of the run>"')


def _same(answers: dict[str, Answer]) -> None:
    reference = answers["without the cache"]
    for label, answer in answers.items():
        assert (answer.code, answer.stdout, answer.summary, answer.stderr) == (
            reference.code,
            reference.stdout,
            reference.summary,
            reference.stderr,
        ), f"{label} differs from the run without the cache"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_pull_request_check_says_the_same_cold_warm_and_seeded_by_a_plain_check(repo: Repo, fmt: str) -> None:
    base = ("--base", "main")
    cold, seeded = f"caches/pr-{fmt}", f"caches/pr-{fmt}-seeded"
    answers = {
        "without the cache": _check(repo, fmt, T0, *base, cache=None),
        "cold": _check(repo, fmt, T0, *base, cache=cold),
        "warm": _check(repo, fmt, T1, *base, cache=cold),
    }
    _check(repo, "json", T0, cache=seeded)  # a plain check fills the cache
    answers["warm after a plain check"] = _check(repo, fmt, T2, *base, cache=seeded)
    answers["warm, self-check mode"] = _check(repo, fmt, T2, *base, cache=cold, self_check="1")
    _same(answers)
    # the three contracts the pull request leaves as they are came from the cache
    assert [answers[k].hits for k in ("cold", "warm", "warm after a plain check")] == [0, 3, 3]
    if fmt in ("markdown", "github"):  # the contract review lists what the pull request changed, only that
        review = answers["warm"].stdout if fmt == "markdown" else answers["warm"].summary
        for name in ("p0", "p1", "p2"):
            assert f"{name}: changed" not in review
        assert "p3: changed" in review and "p6: added" in review and "p5: removed" in review


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_plain_check_says_the_same_cold_and_warm(repo: Repo, fmt: str) -> None:
    cache = f"caches/plain-{fmt}"
    answers = {
        "without the cache": _check(repo, fmt, T0, cache=None),
        "cold": _check(repo, fmt, T0, cache=cache),
        "warm": _check(repo, fmt, T1, cache=cache),
        "warm, self-check mode": _check(repo, fmt, T2, cache=cache, self_check="1"),
    }
    _same(answers)
    assert [answers[k].hits for k in ("cold", "warm")] == [0, 6]
