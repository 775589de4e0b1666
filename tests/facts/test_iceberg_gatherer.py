"""The Iceberg gatherer on real tables (PyIceberg SQL catalog on SQLite, local warehouse): the
facts.iceberg shape, the snapshot window, manifest reads, and the pyiceberg traps."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.conftest import REPO

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from tests.iceberg_tables import (
    CLEAN_PROPERTIES,
    DAY_MS,
    IDENTIFIER,
    JOB_A,
    MINUTE_MS,
    SINK_OP,
    FlinkSink,
    Lake,
    compact,
)

from streamwarden.facts.iceberg import gather_iceberg
from streamwarden.iceberg.snapshots import WindowLimits, summary_dict

CONTRACT = {
    "table": {"catalog": "lake", "identifier": IDENTIFIER},
    "retention": {"rollback_window": 3 * DAY_MS, "snapshots": {"max_age": 7 * DAY_MS}},
}
REPO = REPO


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


def gather(lake: Lake, now_ms: int | None = None, **kw: object) -> dict:
    now = now_ms if now_ms is not None else lake.clock.now_ms + MINUTE_MS
    facts = gather_iceberg(CONTRACT, lake.environment(), lake.root, now, **kw)  # type: ignore[arg-type]
    assert facts["available"], facts.get("error")
    json.dumps(facts)  # the facts document is plain JSON
    return facts


def test_facts_describe_the_table(lake: Lake) -> None:
    table = lake.create_orders({"write.metadata.delete-after-commit.enabled": "true"})
    FlinkSink(lake, table, JOB_A).commit_range(1, 2)
    f = gather(lake)
    assert (f["configured"], f["catalog"], f["identifier"], f["format_version"]) == (True, "lake", IDENTIFIER, 2)
    assert f["schema"]["schema_id"] == 0
    assert f["schema"]["fields"] == [
        {"id": 1, "name": "order_id", "type": "long", "required": True},
        {"id": 2, "name": "amount", "type": "decimal(12,2)", "required": False},
        {"id": 3, "name": "event_time", "type": "timestamptz", "required": True},
    ]
    assert f["schema"]["identifier_fields"] == ["order_id"]
    assert f["partition_spec"]["fields"] == [
        {"source": "event_time", "source_id": 3, "transform": "day", "name": "event_time_day", "field_id": 1000}
    ]
    assert f["sort_order"] == {"order_id": 0, "fields": []}
    assert f["refs"]["main"]["type"] == "branch"
    assert f["branch"] == "main" and f["branch_exists"]


def test_properties_make_iceberg_defaults_explicit(lake: Lake) -> None:
    lake.create_orders({"write.metadata.delete-after-commit.enabled": "true"})
    f = gather(lake)
    props = f["properties"]
    assert props["history.expire.max-snapshot-age-ms"] == "432000000"
    assert props["history.expire.min-snapshots-to-keep"] == "1"
    assert props["write.metadata.delete-after-commit.enabled"] == "true"  # set on the table
    assert "history.expire.max-snapshot-age-ms" in f["properties_defaulted"]
    assert "write.metadata.delete-after-commit.enabled" not in f["properties_defaulted"]
    assert f["retention"] == {
        "max_snapshot_age_ms": 432_000_000,
        "max_snapshot_age_ms_source": "default",
        "min_snapshots_to_keep": 1,
        "min_snapshots_to_keep_source": "default",
    }


def test_branch_ref_retention_overrides_table_properties(lake: Lake) -> None:
    table = lake.create_orders(CLEAN_PROPERTIES)
    sink = FlinkSink(lake, table, JOB_A)
    sink.commit_range(1, 2)
    head = table.current_snapshot()
    assert head is not None
    table.manage_snapshots().create_branch(
        head.snapshot_id, "audit", max_snapshot_age_ms=DAY_MS, min_snapshots_to_keep=3
    ).commit()
    f = gather(lake, branch="audit")
    assert f["retention"]["max_snapshot_age_ms"] == DAY_MS and f["retention"]["max_snapshot_age_ms_source"] == "ref"
    assert f["retention"]["min_snapshots_to_keep"] == 3
    assert f["snapshots"]["head"]["snapshot_id"] == head.snapshot_id
    assert gather(lake)["retention"]["max_snapshot_age_ms_source"] == "property"


def test_snapshots_carry_flink_lineage_and_summaries_as_plain_dicts(lake: Lake) -> None:
    table = lake.create_orders(CLEAN_PROPERTIES)
    ids = FlinkSink(lake, table, JOB_A).commit_range(7, 8)
    f = gather(lake)
    head = f["snapshots"]["head"]
    assert head["snapshot_id"] == ids[-1] and head["parent_id"] == ids[0]
    assert (head["job_id"], head["operator_id"], head["checkpoint_id"]) == (JOB_A, SINK_OP, 8)
    assert head["operation"] == "append" and head["sequence_number"] == 2
    assert head["summary"]["flink.max-committed-checkpoint-id"] == "8"
    assert head["summary"]["operation"] == "append"
    assert [s["snapshot_id"] for s in f["snapshots"]["items"]] == ids[::-1]  # newest first
    assert f["lineage"]["groups"][0]["last_checkpoint_id"] == 8


def test_summary_is_not_a_dict_and_summary_dict_handles_it(lake: Lake) -> None:
    """pyiceberg's Summary: `in` is always true, a missing key is None, dict() raises."""
    table = lake.create_orders()
    FlinkSink(lake, table, JOB_A).commit(1)
    snap = table.current_snapshot()
    assert snap is not None
    assert "no.such.key" in snap.summary  # the trap: membership is always true
    assert snap.summary["no.such.key"] is None
    with pytest.raises(AttributeError):
        dict(snap.summary)
    assert not isinstance(snap.summary["operation"], str)  # an Operation enum
    plain = summary_dict(snap)
    assert type(plain) is dict
    assert "no.such.key" not in plain
    assert plain["operation"] == "append"
    assert plain["flink.job-id"] == JOB_A
    assert all(isinstance(v, str) for v in plain.values())


def test_summary_dict_tolerates_a_missing_summary_and_plain_mappings() -> None:
    class Bare:
        summary = None

    class Plain:
        summary: ClassVar[dict[str, Any]] = {"operation": "append", "x": 1, "gone": None}

    assert summary_dict(Bare()) == {}
    assert summary_dict(Plain()) == {"operation": "append", "x": "1"}


def test_window_keeps_the_horizon_and_the_newest_n(lake: Lake) -> None:
    table = lake.create_orders(CLEAN_PROPERTIES)
    sink = FlinkSink(lake, table, JOB_A)
    old = sink.commit_range(1, 3)
    recent = [sink.commit(4, step_ms=10 * DAY_MS), sink.commit(5)]  # ten days later
    now = lake.clock.now_ms + MINUTE_MS
    f = gather(lake, now, limits=WindowLimits(newest_n=1))
    assert [s["snapshot_id"] for s in f["snapshots"]["items"]] == recent[::-1]  # 7d horizon: old ones out
    assert f["snapshots"]["window"]["since_ms"] == now - 7 * DAY_MS
    assert f["snapshots"]["window"]["size"] == 2 and f["snapshots"]["window"]["ancestors_read"] == 5
    f = gather(lake, now, limits=WindowLimits(newest_n=4))
    assert [s["snapshot_id"] for s in f["snapshots"]["items"]] == [*recent[::-1], old[2], old[1]]
    assert f["snapshots"]["total"] == 5


def test_horizon_grows_with_the_contract() -> None:
    from streamwarden.iceberg.snapshots import window_horizon_ms

    assert window_horizon_ms({}) == 7 * DAY_MS
    assert window_horizon_ms({"retention": {"rollback_window": 30 * DAY_MS}}) == 30 * DAY_MS
    assert (
        window_horizon_ms({"retention": {"snapshots": {"max_age": 9 * DAY_MS}, "rollback_window": DAY_MS}})
        == 9 * DAY_MS
    )


def test_oldest_unprotected_skips_refs_and_min_keep(lake: Lake) -> None:
    table = lake.create_orders({"history.expire.min-snapshots-to-keep": "2"})
    ids = FlinkSink(lake, table, JOB_A).commit_range(1, 4)
    table.manage_snapshots().create_tag(ids[0], "release").commit()
    f = gather(lake)
    assert f["snapshots"]["oldest"]["snapshot_id"] == ids[0]
    assert f["snapshots"]["oldest_unprotected"]["snapshot_id"] == ids[1]  # ids[0] tagged, ids[2:] kept by count


def test_duplicate_data_files_are_found_in_the_window_manifests(lake: Lake) -> None:
    table = lake.create_orders(CLEAN_PROPERTIES)
    sink = FlinkSink(lake, table, JOB_A)
    sink.commit_range(1, 2)
    again = sink.recommit(2)
    files = gather(lake)["files"]
    assert files["scanned"] and not files["truncated"]
    assert (files["manifests_in_window"], files["manifests_read"], files["entries_read"]) == (3, 3, 3)
    [dup] = files["duplicates"]
    assert dup["kind"] == "two_snapshots" and dup["entries"] == 2
    assert sorted(dup["snapshot_ids"]) == sorted([sink.committed[2], again])
    capped = gather(lake, limits=WindowLimits(manifests=1))["files"]
    assert capped["truncated"] and capped["manifests_read"] == 1 and capped["duplicates"] == []
    assert gather(lake, read_files=False)["files"] == {"scanned": False, "error": "manifest reads were turned off"}


def test_manifests_written_before_the_window_are_not_read(lake: Lake) -> None:
    table = lake.create_orders(CLEAN_PROPERTIES)
    sink = FlinkSink(lake, table, JOB_A)
    sink.commit_range(1, 3)
    sink.commit(4, step_ms=10 * DAY_MS)
    sink.commit(5)
    files = gather(lake, limits=WindowLimits(newest_n=1))["files"]
    assert (files["manifests_in_window"], files["manifests_read"], files["entries_read"]) == (2, 2, 2)


def test_compaction_is_maintenance_not_a_stranger(lake: Lake) -> None:
    table = lake.create_orders(CLEAN_PROPERTIES)
    FlinkSink(lake, table, JOB_A).commit_range(1, 2)
    sid = compact(lake, table)
    f = gather(lake)
    assert f["snapshots"]["head"]["snapshot_id"] == sid and f["snapshots"]["head"]["operation"] == "replace"
    assert f["lineage"]["out_of_band"] == [] and f["lineage"]["missing_lineage"] == []
    assert f["files"]["duplicates"] == []


def test_empty_table_has_no_head_and_no_window(lake: Lake) -> None:
    lake.create_orders()
    f = gather(lake)
    assert f["snapshots"]["head"] is None and f["snapshots"]["items"] == []
    assert f["snapshots"]["oldest_unprotected"] is None and not f["branch_exists"]
    assert f["lineage"]["snapshots"] == 0 and f["files"]["scanned"] is False


def test_evolved_schema_lists_history_and_normalized_types(lake: Lake) -> None:
    from pyiceberg.types import DecimalType, StringType

    table = lake.create_orders()
    with table.update_schema() as upd:
        upd.add_column("currency", StringType())
        upd.update_column("amount", DecimalType(14, 2))
    f = gather(lake)
    assert f["schema"]["schema_id"] == 1
    assert [s["schema_id"] for s in f["schemas"]] == [1, 0]
    assert {fl["name"]: fl["type"] for fl in f["schema"]["fields"]}["amount"] == "decimal(14,2)"


def test_a_static_import_never_loads_pyiceberg_or_pyarrow() -> None:
    code = (
        "import sys\n"
        "import streamwarden.facts.iceberg, streamwarden.iceberg.lineage, streamwarden.iceberg.types\n"
        "import streamwarden.iceberg.catalog, streamwarden.iceberg.snapshots\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyiceberg', 'pyarrow')]\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
