"""The result cache decides from what an evaluation read whether its result depends on the time,
and for how long it holds (issue 26, point 8; issue 27, point 2).

A custom policy may reach ``input.now_ms`` without spelling it (a computed key, the whole input
handed to a function or walked, an import alias, another package's rule): a result its reads of
the time decided is never reused at another time. One that did not read it (its read sites did
not run for that contract) is reused at any time. The built-in waiver package compares the time
with each waiver's end only: its results hold between two waiver ends, an expired waiver's
finding showing the time of the run that reuses it.

Real git-free repositories, the real CLI in a subprocess. Each test runs in self-check mode
(tests/conftest.py: every hit is evaluated again and compared), and the answers users get, with
self-check mode off, are compared with a run without the cache.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT
from tests.gitrepo import Repo

DEADLINE_MS = 1798761600000  # 2027-01-01T00:00:00Z
BEFORE, AFTER, LATER = "2026-12-30T12:00:00Z", "2027-01-02T12:00:00Z", "2027-01-03T12:00:00Z"
FINDING = '{"rule": "ACME-010", "message": "the migration deadline has passed", "path": "metadata.name"}'
_STATS = re.compile(r"cache (\d+) hits?, (\d+) miss")


def _policy(body: str, head: str = "") -> str:
    return f"package acme.deadline\n\nimport rego.v1\n{head}\n" + textwrap.dedent(body).replace("FINDING", FINDING)


# Ways a policy reaches input.now_ms without the text `now_ms` or with it only in an alias.
INDIRECT = {
    "a computed key (issue 26)": {
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \tsome k, v in input
            \tk == concat("_", ["now", "ms"])
            \tv >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """
        )
    },
    "walk over the input": {
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \twalk(input, [path, v])
            \tpath == [concat("_", ["now", "ms"])]
            \tv >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """
        )
    },
    "object.get with a computed key": {
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \tobject.get(input, concat("_", ["now", "ms"]), 0) >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """
        )
    },
    "the input handed to a function": {
        "deadline.rego": _policy(
            f"""
            _clock(doc) := doc[concat("_", ["now", "ms"])]

            deny contains f if {{
            \t_clock(input) >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """
        )
    },
    "the input round-tripped through JSON": {
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \tdoc := json.unmarshal(json.marshal(input))
            \tdoc.now_ms >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """
        )
    },
    "an import alias of the input": {
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \tdocument.now_ms >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """,
            head="import input as document\n",
        )
    },
    "an import alias of the time": {
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \tclock >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """,
            head="import input.now_ms as clock\n",
        )
    },
    "a rule's value, read in a comprehension": {
        "deadline.rego": _policy(
            f"""
            _late := [k | some k, v in input; v == input[k]; k == concat("_", ["now", "ms"]); v >= {DEADLINE_MS}]

            deny contains f if {{
            \tcount(_late) > 0
            \tf := FINDING
            }}
            """
        )
    },
    "a rule of another custom package": {
        "clock.rego": "package acme.clock\n\nimport rego.v1\n\nnow := input.now_ms\n",
        "deadline.rego": _policy(
            f"""
            deny contains f if {{
            \tdata.acme.clock.now >= {DEADLINE_MS}
            \tf := FINDING
            }}
            """
        ),
    },
}


def _repo(root: Path, policies: dict[str, str], contracts: dict[str, str] | None = None) -> Path:
    (root / "policies").mkdir(parents=True)
    (root / "streamwarden.yaml").write_text("policies: [policies]\n", encoding="utf-8")
    for name, text in policies.items():
        (root / "policies" / name).write_text(text, encoding="utf-8")
    (root / "contracts").mkdir()
    for name, text in (contracts or {"orders.yaml": CLEAN_CONTRACT}).items():
        (root / "contracts" / name).write_text(text, encoding="utf-8")
    return root


def _check(root: Path, now: str, *args: str, self_check: str = "1") -> tuple[Proc, tuple[int, int] | None]:
    p = sw(
        "check", "-v", "--format", "json", "--now", now, *args, cwd=root, env={"STREAMWARDEN_SELF_CHECK": self_check}
    )
    assert p.code in (0, 1), p
    m = _STATS.search(p.stderr)
    return p, ((int(m.group(1)), int(m.group(2))) if m else None)


def _rules(p: Proc) -> list[tuple[str, str]]:
    return sorted((f["pipeline"], f["rule"]) for f in p.json()["findings"])


@pytest.mark.parametrize("how", list(INDIRECT))
def test_a_result_a_custom_policy_read_the_time_for_is_not_reused_after_its_deadline(tmp_path: Path, how: str) -> None:
    root = _repo(tmp_path, INDIRECT[how])
    before, stats = _check(root, BEFORE)
    assert stats == (0, 1) and ("orders-enrichment", "ACME-010") not in _rules(before), before
    # what users get (self-check mode off: the cache's answer as it is), then in self-check mode,
    # each at an instant after the deadline
    for now, self_check in ((AFTER, "0"), (LATER, "1")):
        fresh, _ = _check(root, now, "--no-cache")
        assert fresh.code == 1 and ("orders-enrichment", "ACME-010") in _rules(fresh), fresh
        after, stats = _check(root, now, self_check=self_check)
        assert stats == (0, 1), after  # each entry held only at the time it was computed at
        assert (after.code, after.stdout) == (fresh.code, fresh.stdout)
    assert _check(root, LATER)[1] == (1, 0)  # a --now replay of the same instant may reuse it


def test_a_result_whose_evaluation_ran_no_read_of_the_time_is_reused_at_any_time(tmp_path: Path) -> None:
    """The deadline applies to the legacy team's pipelines only: for the others the read of the
    time never runs, and their result holds after the deadline too; the legacy one's does not."""
    policy = _policy(
        f"""
        deny contains f if {{
        \tinput.contract.metadata.owner == "legacy-team"
        \tinput.now_ms >= {DEADLINE_MS}
        \tf := FINDING
        }}
        """
    )
    legacy = CLEAN_CONTRACT.replace("orders-enrichment", "legacy").replace("owner: payments-data", "owner: legacy-team")
    root = _repo(tmp_path, {"deadline.rego": policy}, {"orders.yaml": CLEAN_CONTRACT, "legacy.yaml": legacy})
    assert _check(root, BEFORE)[1] == (0, 2)
    for now, self_check in ((AFTER, "0"), (LATER, "1")):
        fresh, _ = _check(root, now, "--no-cache")
        assert ("legacy", "ACME-010") in _rules(fresh) and ("orders-enrichment", "ACME-010") not in _rules(fresh)
        after, stats = _check(root, now, self_check=self_check)
        assert stats == (1, 1), after  # orders-enrichment from the cache, legacy evaluated again
        assert after.stdout == fresh.stdout


def _waived(name: str, *waivers: str) -> str:
    text = CLEAN_CONTRACT.replace("orders-enrichment", name)
    text = text.replace("  backend: rocksdb", "  backend: hashmap").replace("  min_pause: 30s", "  min_pause: 90s")
    return text + "waivers:\n" + "".join(waivers)


EXPIRED = "  - {rule: SW-STATE-002, reason: migration, expires: 2026-12-31, approved_by: platform}\n"  # ends 2027-01-01
IN_FORCE = "  - {rule: SW-CKPT-002, reason: tuning, expires: 2027-01-09, approved_by: platform}\n"  # ends 2027-01-10


def _expired_evidence(p: Proc) -> list[int]:
    return [f["evidence"]["now_ms"] for f in p.json()["findings"] if f["rule"] == "SW-WAIVER-001"]


def test_an_expired_waivers_result_holds_until_the_next_waiver_end(tmp_path: Path) -> None:
    """Between the end of the expired waiver (2027-01-01) and the end of the one in force
    (2027-01-10) the result is the same but for the time the expired waiver's finding shows: it is
    reused, showing the time of the run that reuses it. Outside that interval it is not."""
    root = tmp_path / "repo"
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(_waived("orders", EXPIRED, IN_FORCE), encoding="utf-8")
    first, stats = _check(root, "2027-01-02T12:00:00Z")
    assert stats == (0, 1) and _expired_evidence(first) == [1798891200000], first
    for now, expect_ms in (("2027-01-05T00:00:00Z", 1799107200000), ("2027-01-09T23:59:59.5Z", 1799539199500)):
        fresh, _ = _check(root, now, "--no-cache")
        for self_check in ("0", "1"):
            hit, stats = _check(root, now, self_check=self_check)
            assert stats == (1, 0), hit
            assert hit.stdout == fresh.stdout and _expired_evidence(hit) == [expect_ms]
    # the waiver in force ends: SW-CKPT-002 is no longer waived, a second SW-WAIVER-001
    after, stats = _check(root, "2027-01-10T00:00:00Z")
    assert stats == (0, 1) and len(_expired_evidence(after)) == 2, after
    # before the first waiver's end: nothing expired
    before, stats = _check(root, "2026-12-31T23:59:59.5Z")
    assert stats == (0, 1) and _expired_evidence(before) == [], before


def test_a_custom_policy_that_reads_the_waiver_rules_makes_their_time_its_own(tmp_path: Path) -> None:
    """A custom rule built on the built-in waiver rules sees the time through them (here: in an
    expired waiver's evidence), which a comparison with the waivers' ends does not bound: such a
    result holds at the time it was computed at only."""
    policy = _policy(
        f"""
        deny contains f if {{
        \tsome x in data.streamwarden.waiver.deny
        \tx.evidence.now_ms >= {DEADLINE_MS + 86_400_000}
        \tf := FINDING
        }}
        """
    )
    root = _repo(tmp_path, {"deadline.rego": policy}, {"orders.yaml": _waived("orders", EXPIRED)})
    before, stats = _check(root, "2027-01-01T12:00:00Z")  # expired, a day before the custom deadline
    assert stats == (0, 1) and ("orders", "ACME-010") not in _rules(before)
    for now, self_check in (("2027-01-03T00:00:00Z", "0"), ("2027-01-04T00:00:00Z", "1")):
        after, stats = _check(root, now, self_check=self_check)
        assert stats == (0, 1) and ("orders", "ACME-010") in _rules(after), after


def _entry(root: Path) -> Path:
    """The one entry file (the packs, which would answer first, removed)."""
    for pack in (root / ".streamwarden-cache" / "packs").glob("*.json"):
        pack.unlink()
    (entry,) = (root / ".streamwarden-cache" / "v1").rglob("*.json")
    return entry


def test_self_check_mode_catches_an_entry_that_holds_too_long_or_shows_a_stale_time(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(_waived("orders", EXPIRED, IN_FORCE), encoding="utf-8")
    _check(root, "2027-01-02T12:00:00Z")
    entry = _entry(root)
    data = json.loads(entry.read_text(encoding="utf-8"))
    assert (data["valid_from"], data["valid_until"]) == (1798761600000, 1799539200000)
    assert data["clock"], data  # where the expired waiver's finding shows the time
    for forged, now in (
        ({**data, "valid_until": None}, "2027-01-10T00:00:00Z"),  # past the next waiver end
        ({**data, "clock": []}, "2027-01-05T00:00:00Z"),  # the time it was computed at, shown again
    ):
        _entry(root).write_text(json.dumps(forged), encoding="utf-8")  # (the packs written since removed)
        p = sw("check", "--format", "json", "--now", now, cwd=root)
        assert p.code == 2 and "stale result" in p.stderr, p
        wrong = sw("check", "--format", "json", "--now", now, cwd=root, env={"STREAMWARDEN_SELF_CHECK": "0"})
        fresh = sw("check", "--format", "json", "--now", now, "--no-cache", cwd=root)
        assert wrong.stdout != fresh.stdout  # the forged entry does change the answer: the check matters


def test_self_check_mode_catches_a_hit_the_contract_review_would_list(tmp_path: Path) -> None:
    """Were the cache to answer a contract the pull request changes (here: the run made to think
    every file is unchanged), the review would lose its changes: self-check mode says so."""
    repo = Repo(tmp_path / "repo")
    repo.write(".gitignore", ".streamwarden-cache/\n")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("feature")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT.replace("max_parallelism: 128", "max_parallelism: 256"))
    repo.commit("the pull request")
    _check(repo.path, BEFORE)  # a plain check: the changed contract's entry
    patch = "import streamwarden.repo.pullrequest as pr\npr.BaseSnapshot.unchanged = lambda self, head_file: True\n"
    code = f"{patch}from streamwarden.cli import main\nimport sys\nsys.argv = ['streamwarden', *sys.argv[1:]]\nmain()\n"
    args = ["check", "--base", "main", "--format", "markdown", "--now", BEFORE]
    proc = Proc(
        subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=repo.path,
            capture_output=True,
            env={**os.environ, "NO_COLOR": "1", "STREAMWARDEN_SELF_CHECK": "1"},
            check=False,
            timeout=120,
        )
    )
    assert proc.code == 2 and "whose review lists changes" in proc.stderr, proc


def test_the_only_built_in_file_a_static_check_evaluates_that_may_read_the_time_is_the_waiver_expiry() -> None:
    """The cache knows the reads of the time of the built-in waiver package only (it compares the
    time with each waiver's end): any other built-in file a static check selects that may read it
    would make every result hold for one instant. A file whose conditions (METADATA
    custom.requires) a static document fails (live facts, a base, the gate) may read it freely."""
    from streamwarden.engine import load_policy_set

    policy_set = load_policy_set(builtin_tests=False)
    static = {"contract": {}, "base": None, "facts": {"deployment": {"configured": True}}, "now_ms": 0, "mode": "check"}
    readers = {f.display for f in policy_set.files_for(static) if f.now_reads}
    assert readers == {"policies/streamwarden/waiver/sw_waiver_001.rego"}
    assert all(f.package == "streamwarden.waiver" for f in policy_set.files if f.display in readers)
    # where it reads it: one site compares the time with a waiver's end, the other with the instant
    # its expires day comes within waivers.max_horizon (cache.timing_for knows both thresholds). A
    # new read site must be taught to timing_for before this list changes.
    (waiver,) = [f for f in policy_set.files if f.display == "policies/streamwarden/waiver/sw_waiver_001.rego"]
    lines = waiver.source.splitlines()
    assert [lines[first - 1].strip() for first, _ in waiver.now_reads] == ["now_ms := input.now_ms"] * 2
