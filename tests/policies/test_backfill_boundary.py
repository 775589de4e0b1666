"""A declared backfill's boundary, live (SW-TABLE-015), through the real CLI on a real table.

The owner pipeline commits to main; the backfill's contract declares itself a backfill of it
confined to branch ``backfill-2025q3`` and to event_time in [2025-07-01, 2025-10-01). Both commit the
way the Iceberg Flink sink does (``flink.job-id``, ``flink.operator-id``,
``flink.max-committed-checkpoint-id`` in the snapshot summary; tests/iceberg_tables.py), on a
PyIceberg SQLite catalog. ``check --env`` reads where the backfill's snapshots landed and what its
data files' partitions reach, from the table metadata and manifests only."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import sw

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

import pyarrow as pa
from tests.iceberg_tables import JOB_A, JOB_BACKFILL, FlinkSink, Lake, lineage_properties

BRANCH = "backfill-2025q3"
OWNER = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {name: orders, owner: payments-data}
job:
  name: orders
  sinks: [{name: lake, table: sales.orders}]
table: {catalog: lake, identifier: sales.orders}
"""
BACKFILL = f"""\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {{name: orders-backfill, owner: payments-data}}
job:
  name: orders-backfill
  sinks: [{{name: lake, table: sales.orders}}]
table: {{catalog: lake, identifier: sales.orders}}
fork_of:
  pipeline: orders
  kind: backfill
  job_id: {JOB_BACKFILL}
  branch: {BRANCH}
  range: {{column: event_time, from: "2025-07-01T00:00:00Z", to: "2025-10-01T00:00:00Z"}}
  reason: replay the third quarter after the enrichment fix
"""


def at(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day + "T12:00:00+00:00")


def backfill_commit(lake: Lake, table: Any, checkpoint: int, days: list[str], branch: str) -> int:
    """One commit of the backfill job: rows whose event_time falls on ``days``, to ``branch``."""
    rows = [{"order_id": 10_000 + checkpoint * 10 + i, "amount": None, "event_time": at(d)} for i, d in enumerate(days)]
    lake.clock.tick()
    with lake.frozen_clock():
        table.append(
            pa.Table.from_pylist(rows, schema=table.schema().as_arrow()),
            snapshot_properties=lineage_properties(JOB_BACKFILL, checkpoint),
            branch=branch,
        )
    table.refresh()
    ref = table.metadata.refs[branch]
    return ref.snapshot_id


def lake_with_owner(tmp_path: Path) -> tuple[Lake, Any]:
    lake = Lake(tmp_path)
    table = lake.create_orders()
    FlinkSink(lake, table, JOB_A).commit_range(1, 3)
    return lake, table


def make_branch(table: Any) -> None:
    head = table.current_snapshot()
    table.manage_snapshots().create_branch(head.snapshot_id, BRANCH).commit()
    table.refresh()


def check(
    lake: Lake, backfill: str = BACKFILL, owner: str = OWNER, pipeline: str = "orders-backfill"
) -> list[dict[str, Any]]:
    contracts = lake.root / "contracts"
    contracts.mkdir(exist_ok=True)
    (contracts / "orders.yaml").write_text(owner, encoding="utf-8")
    (contracts / "orders-backfill.yaml").write_text(backfill, encoding="utf-8")
    config = {"environments": {"local": {"iceberg": lake.environment()}}}
    (lake.root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    p = sw("check", "--env", "local", "--format", "json", "--fail-on", "never", cwd=lake.root)
    assert p.code == 0, p
    return [f for f in p.json()["findings"] if f["pipeline"] == pipeline]


def of(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == rule]


def test_a_backfill_declared_on_its_branch_that_commits_to_main_is_an_error(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    first = backfill_commit(lake, table, 1, ["2025-08-01"], "main")
    second = backfill_commit(lake, table, 2, ["2025-08-02"], "main")
    [f] = of(check(lake), "SW-TABLE-015")
    assert f["severity"] == "error"
    assert f["path"] == "fork_of.branch"
    assert f["file"] == "contracts/orders-backfill.yaml" and f["line"] == 12
    assert f'committed snapshots {second}, {first} to branch "main"' in f["message"]
    assert f'outside its declared branch "{BRANCH}"' in f["message"]
    assert f["evidence"]["snapshot_ids"] == [second, first]


def test_the_same_commits_on_the_declared_branch_pass(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    backfill_commit(lake, table, 1, ["2025-08-01"], BRANCH)
    backfill_commit(lake, table, 2, ["2025-08-02"], BRANCH)
    FlinkSink(lake, table, JOB_A).commit_range(4, 5)  # the owner goes on on main
    findings = check(lake)
    assert of(findings, "SW-TABLE-015") == []
    assert of(findings, "SW-FACT-001") == []


def test_the_owner_sees_its_declared_backfill_on_main_too(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    sid = backfill_commit(lake, table, 1, ["2025-08-01"], "main")
    owner = OWNER + f"backfills:\n  - {{job: orders-backfill, job_id: {JOB_BACKFILL}, branch: {BRANCH}}}\n"
    [f] = of(check(lake, owner=owner, pipeline="orders"), "SW-TABLE-015")
    assert f["path"] == "backfills[0].branch"
    assert f'committed snapshot {sid} to branch "main"' in f["message"]


def test_a_backfill_that_wrote_a_partition_after_its_range_is_an_error(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    backfill_commit(lake, table, 1, ["2025-08-01"], BRANCH)
    late = backfill_commit(lake, table, 2, ["2025-09-30", "2025-10-03"], BRANCH)
    [f] = of(check(lake), "SW-TABLE-015")
    assert f["path"] == "fork_of.range"
    assert (
        "outside its declared range [2025-07-01T00:00:00Z, 2025-10-01T00:00:00Z) of column event_time" in f["message"]
    )
    assert (
        f"snapshot {late}: partition event_time_day=20364 (2025-10-03T00:00:00Z .. 2025-10-03T23:59:59.999999Z)"
        in (f["message"])
    )
    assert "at or after 2025-10-01T00:00:00Z" in f["message"]
    assert "judged by partition event_time_day (day of timestamptz)" in f["message"]
    assert [s["snapshot_id"] for s in f["evidence"]["snapshots"]] == [late]


def test_a_backfill_that_wrote_a_partition_before_its_range_is_an_error(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    early = backfill_commit(lake, table, 1, ["2025-06-30"], BRANCH)
    [f] = of(check(lake), "SW-TABLE-015")
    assert f"snapshot {early}: partition event_time_day=20269" in f["message"]
    assert "before 2025-07-01T00:00:00Z" in f["message"]


def test_a_backfill_inside_its_range_edges_included_passes(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    backfill_commit(lake, table, 1, ["2025-07-01", "2025-09-30"], BRANCH)
    assert of(check(lake), "SW-TABLE-015") == []


def test_the_range_on_an_unpartitioned_column_is_judged_by_its_bounds(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    backfill_commit(lake, table, 1, ["2025-08-01"], BRANCH)
    sid = backfill_commit(lake, table, 2, ["2025-08-02"], BRANCH)
    by_id = BACKFILL.replace("column: event_time", "column: order_id").replace(
        '"2025-07-01T00:00:00Z", to: "2025-10-01T00:00:00Z"', "10000, to: 10020"
    )  # order ids 10010 and 10020: the second commit's upper bound is the range's end
    [f] = of(check(lake, by_id), "SW-TABLE-015")
    assert f"snapshot {sid}: upper bound 10020, at or after 10020" in f["message"]
    assert "judged by column bounds" in f["message"]
    assert of(check(lake, by_id.replace("to: 10020", "to: 10021")), "SW-TABLE-015") == []


def test_an_unreadable_manifest_of_the_backfill_is_a_gap_and_the_gate_fails_closed(tmp_path: Path) -> None:
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    sid = backfill_commit(lake, table, 1, ["2025-08-01"], BRANCH)
    snap = table.snapshot_by_id(sid)
    for m in snap.manifests(table.io):
        if m.added_snapshot_id == sid:
            Path(m.manifest_path.removeprefix("file://")).unlink()
    findings = check(lake)
    [f] = [f for f in of(findings, "SW-FACT-001") if f["path"] == "fork_of.range"]
    assert (
        f'the manifests of backfill "orders-backfill" (declared at fork_of) could not be read (snapshot {sid}:'
        in (f["message"])
    )
    assert of(findings, "SW-TABLE-015") == []
    p = sw("gate", "orders-backfill", "--env", "local", "--format", "json", cwd=lake.root)
    assert p.code == 1, p
    gap = [x for x in p.json()["reasons"] if x["rule"] == "SW-FACT-001" and x["path"] == "fork_of.range"]
    assert [x["severity"] for x in gap] == ["error"], p


def test_without_a_job_id_the_job_name_resolves_through_flink_rest(tmp_path: Path) -> None:
    """fork_of without job_id: the backfill's job.name, listed by Flink REST (a loopback stand-in
    serving Flink 2.3.0's answers), gives its job id; with no Flink facts nothing can be matched."""
    from tests.fake_flink import NOW, fake_flink, healthy_routes, job, overview

    lake, table = lake_with_owner(tmp_path)
    sid = backfill_commit(lake, table, 1, ["2025-08-01"], "main")
    no_id = BACKFILL.replace(f"  job_id: {JOB_BACKFILL}\n", "")
    assert of(check(lake, no_id), "SW-TABLE-015") == []  # no job id known: silent
    routes = healthy_routes(JOB_BACKFILL, "orders-backfill")
    routes["/jobs/overview"] = (200, overview((JOB_BACKFILL, "orders-backfill", "FINISHED", NOW - 60000)))
    routes[f"/jobs/{JOB_BACKFILL}"] = (200, job(JOB_BACKFILL, "orders-backfill", "FINISHED"))
    with fake_flink() as fake:
        fake.routes = routes
        config = {"environments": {"local": {"iceberg": lake.environment(), "flink": {"rest_url": fake.url}}}}
        (lake.root / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        p = sw("check", "--env", "local", "--format", "json", "--fail-on", "never", cwd=lake.root)
    found = [f for f in p.json()["findings"] if f["rule"] == "SW-TABLE-015" and f["pipeline"] == "orders-backfill"]
    assert [f["evidence"]["snapshot_ids"] for f in found] == [[sid]], p


def test_a_wap_staged_backfill_is_found_by_its_wap_id_and_judged_on_its_range(tmp_path: Path) -> None:
    """fork_of with a WAP id and no job id: its snapshots carry wap.id and sit on no branch
    (staged: written to a branch that is then dropped, as an audit leaves them); one that wrote a
    partition after the range fires, naming the WAP id."""
    lake, table = lake_with_owner(tmp_path)
    make_branch(table)
    rows = [{"order_id": 20_000, "amount": None, "event_time": at("2025-10-02")}]
    lake.clock.tick()
    with lake.frozen_clock():
        table.append(
            pa.Table.from_pylist(rows, schema=table.schema().as_arrow()),
            snapshot_properties={"wap.id": "replay-42"},
            branch=BRANCH,
        )
    table.refresh()
    staged = table.metadata.refs[BRANCH].snapshot_id
    table.manage_snapshots().remove_branch(BRANCH).commit()
    wap = BACKFILL.replace(f"  job_id: {JOB_BACKFILL}\n", "").replace(f"  branch: {BRANCH}\n", "  wap_id: replay-42\n")
    [f] = of(check(lake, wap), "SW-TABLE-015")
    assert f["path"] == "fork_of.range"
    assert f["message"].startswith(
        'backfill "orders-backfill" (WAP id "replay-42", declared at fork_of) wrote data outside'
    )
    assert f"snapshot {staged}: partition event_time_day=20363" in f["message"]
