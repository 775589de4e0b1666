"""One writer per table (SW-TABLE-014) across the repository's contracts, through the real CLI: a
second contract writing a table must declare itself a backfill or fork of the owner with a
boundary; it is an error in `check`, a breaking change in the pull-request review, and survives
the result cache and the forked workers (the rule sees every contract of the run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

# CLEAN_CONTRACT: orders-enrichment, a sink writing sales.orders and table.identifier sales.orders
REPLAY = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {name: orders-replay, owner: payments-data}
job:
  name: orders-replay
  max_parallelism: 128
  sinks:
    - name: orders-table
      kind: iceberg
      table: sales.orders
FORK_OF
"""
BOUNDED = """\
fork_of:
  pipeline: orders-enrichment
  kind: backfill
  branch: backfill-2025q3
  range: {column: event_time, from: 2025-07-01T00:00:00Z, to: 2025-10-01T00:00:00Z}
  reason: re-enrich Q3 after the customer dimension fix
"""
UNBOUNDED = """\
fork_of:
  pipeline: orders-enrichment
  kind: backfill
"""


def replay(fork_of: str = "", extra: str = "") -> str:
    return REPLAY.replace("FORK_OF\n", fork_of) + extra


def project(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / "contracts").mkdir(exist_ok=True)
        (tmp_path / "contracts" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def check(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Proc, list[dict[str, Any]]]:
    p = sw("check", "--format", "json", "--now", NOW, *args, cwd=root, env=env)
    assert p.code in (0, 1), p
    return p, [f for f in p.json()["findings"] if f["rule"] == "SW-TABLE-014"]


def test_a_second_writer_without_fork_of_is_an_error_on_its_sink(tmp_path: Path) -> None:
    root = project(tmp_path, orders=CLEAN_CONTRACT, replay=replay())
    p, (f,) = check(root)
    assert p.code == 1
    assert f["pipeline"] == "orders-replay" and f["severity"] == "error"
    assert (f["file"], f["line"], f["path"]) == ("contracts/replay.yaml", 10, "job.sinks[0].table")
    assert f["message"].startswith(
        'pipeline "orders-replay" writes table sales.orders (job.sinks[0].table), which pipeline "orders-enrichment" '
        "owns, without declaring itself a backfill or fork of it"
    )
    text = sw("check", "--now", NOW, cwd=root)
    assert "SW-TABLE-014  contracts/replay.yaml:10  job.sinks[0].table" in text.stdout


def test_a_bounded_backfill_of_the_owner_passes(tmp_path: Path) -> None:
    root = project(tmp_path, orders=CLEAN_CONTRACT, replay=replay(BOUNDED))
    _, found = check(root)
    assert found == [], found
    validate = sw("validate", "contracts/replay.yaml", cwd=root)
    assert validate.code == 0, validate


def test_a_backfill_without_a_boundary_names_what_it_lacks(tmp_path: Path) -> None:
    root = project(tmp_path, orders=CLEAN_CONTRACT, replay=replay(UNBOUNDED))
    _, (f,) = check(root)
    assert (f["file"], f["line"], f["path"]) == ("contracts/replay.yaml", 11, "fork_of")
    assert "no branch or WAP id (branch, wap_id) and no from/to range (range)" in f["message"]


def test_a_fork_of_another_pipeline_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path, orders=CLEAN_CONTRACT, replay=replay(BOUNDED.replace("orders-enrichment", "payments")))
    _, (f,) = check(root)
    assert f["path"] == "fork_of.pipeline" and f["line"] == 12
    assert 'fork_of names pipeline "payments", but table sales.orders belongs to "orders-enrichment"' in f["message"]


def test_a_waiver_of_the_second_contract_waives_it(tmp_path: Path) -> None:
    waiver = (
        'waivers:\n  - {rule: SW-TABLE-014, reason: "one-off migration job", expires: 2026-12-31, approved_by: lake}\n'
    )
    root = project(tmp_path, orders=CLEAN_CONTRACT, replay=replay(extra=waiver))
    p, (f,) = check(root)
    assert f["waived"] is True and p.code == 0


def test_the_result_cache_and_the_workers_keep_every_writer_in_view(tmp_path: Path) -> None:
    others = {
        f"p{i}": CLEAN_CONTRACT.replace("orders-enrichment", f"p{i}").replace("sales.orders", f"sales.t{i}")
        for i in range(6)
    }
    root = project(tmp_path, orders=CLEAN_CONTRACT, replay=replay(), **others)
    for n, env in enumerate(({}, {"STREAMWARDEN_WORKERS": "2"})):  # in this process, then in forked workers
        cache = ["--cache", str(tmp_path / f"cache{n}"), "-v"]
        cold, found = check(root, *cache, env=env)
        assert [f["pipeline"] for f in found] == ["orders-replay"], cold
        assert "cache 0 hits, 8 misses" in cold.stderr
        warm, found = check(root, *cache, env=env)  # every contract answered by the cache
        assert [f["pipeline"] for f in found] == ["orders-replay"], warm
        assert "cache 8 hits, 0 misses" in warm.stderr


# ---------------------------------------------------------------- in a pull request


def pull_request(tmp_path: Path, base: dict[str, str], head: dict[str, str]) -> Repo:
    repo = Repo(tmp_path / "repo")
    for name, text in base.items():
        repo.write(f"contracts/{name}.yaml", text)
    repo.commit("base")
    repo.branch("feature")
    for name, text in head.items():
        repo.write(f"contracts/{name}.yaml", text)
    repo.commit("head")
    return repo


def review(repo: Repo) -> tuple[Proc, dict[str, dict[str, Any]]]:
    p = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
    assert p.code in (0, 1), p
    return p, {x["pipeline"]: x for x in p.json()["pipelines"]}


def test_a_pull_request_adding_a_second_writer_is_breaking(tmp_path: Path) -> None:
    repo = pull_request(tmp_path, {"orders": CLEAN_CONTRACT}, {"replay": replay()})
    p, found = check(repo.path, "--base", "main")
    assert p.code == 1 and [f["pipeline"] for f in found] == ["orders-replay"]
    p, pipelines = review(repo)
    assert p.code == 1
    added = pipelines["orders-replay"]
    assert added["status"] == "added"
    (change,) = added["changes"]
    assert (change["class"], change["rule"], change["path"]) == ("breaking", "SW-TABLE-014", "job.sinks[0].table")
    md = sw("diff", "--base", "main", "--format", "markdown", "--now", NOW, cwd=repo.path)
    assert md.code == 1 and "SW-TABLE-014" in md.stdout


def test_a_pull_request_adding_a_bounded_backfill_is_not_breaking(tmp_path: Path) -> None:
    repo = pull_request(tmp_path, {"orders": CLEAN_CONTRACT}, {"replay": replay(BOUNDED)})
    p, pipelines = review(repo)
    assert p.code == 0 and pipelines["orders-replay"]["changes"] == []


def test_in_a_pull_request_the_copy_is_the_second_writer_not_the_owner(tmp_path: Path) -> None:
    # a copy of the owner's contract under a new name: both declare table.identifier sales.orders
    copy = CLEAN_CONTRACT.replace("name: orders-enrichment", "name: orders-enrichment-v2")
    repo = pull_request(tmp_path, {"orders": CLEAN_CONTRACT}, {"orders-v2": copy})
    _, found = check(repo.path, "--base", "main")
    assert {f["pipeline"] for f in found} == {"orders-enrichment-v2"}
    # without the history, neither can be told the owner: both are reported
    _, found = check(repo.path)
    assert {f["pipeline"] for f in found} == {"orders-enrichment", "orders-enrichment-v2"}


def test_a_pull_request_pointing_a_sink_at_another_contracts_table_is_breaking(tmp_path: Path) -> None:
    payments = replay().replace("orders-replay", "payments").replace("table: sales.orders", "table: sales.payments")
    repo = pull_request(
        tmp_path,
        {"orders": CLEAN_CONTRACT, "payments": payments},
        {"payments": payments.replace("table: sales.payments", "table: sales.orders")},
    )
    p, pipelines = review(repo)
    assert p.code == 1
    (change,) = pipelines["payments"]["changes"]
    assert (change["path"], change["class"], change["rule"]) == ("job.sinks[0].table", "breaking", "SW-TABLE-014")
    assert pipelines.get("orders-enrichment") is None or pipelines["orders-enrichment"]["changes"] == []


def test_a_conflict_the_base_already_held_is_reported_but_not_listed_as_a_change(tmp_path: Path) -> None:
    # two contracts already wrote sales.orders at the base; the PR adds a third. The old pair
    # still fails the check, but the review lists only what the PR changed (the newcomer), with
    # the cache or without it
    copy = CLEAN_CONTRACT.replace("name: orders-enrichment", "name: orders-enrichment-v2")
    repo = pull_request(tmp_path, {"orders": CLEAN_CONTRACT, "orders-v2": copy}, {"replay": replay()})
    _, found = check(repo.path, "--base", "main", "--no-cache")
    assert {f["pipeline"] for f in found} == {"orders-enrichment", "orders-enrichment-v2", "orders-replay"}
    for cache in (("--no-cache",), ("--cache", str(tmp_path / "c")), ("--cache", str(tmp_path / "c"))):
        p = sw("check", "--base", "main", "--format", "json", "--now", NOW, *cache, cwd=repo.path)
        assert p.code == 1, p
        p = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
        listed = {x["pipeline"]: x["changes"] for x in p.json()["pipelines"]}
        assert [c["rule"] for c in listed["orders-replay"]] == ["SW-TABLE-014"]
        assert listed.get("orders-enrichment", []) == [] and listed.get("orders-enrichment-v2", []) == []
