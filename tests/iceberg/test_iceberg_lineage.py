"""Flink commit lineage along a branch (streamwarden.iceberg.lineage): pure, on snapshot dicts in
ancestry order, oldest first, shaped like facts.iceberg.snapshots.items."""

from __future__ import annotations

from typing import Any

from streamwarden.iceberg import lineage
from streamwarden.iceberg.lineage import END_INPUT_CHECKPOINT_ID, analyze_lineage

A, B, F = "a" * 32, "b" * 32, "f" * 32
OP = "0123456789abcdef0123456789abcdef"


def snap(
    sid: int,
    job: str | None = A,
    ckpt: int | str | None = None,
    op: str | None = OP,
    operation: str = "append",
    **extra: str,
) -> dict[str, Any]:
    summary: dict[str, Any] = {"operation": operation, **extra}
    if job is not None:
        summary["flink.job-id"] = job
    if op is not None and job is not None:
        summary["flink.operator-id"] = op
    if ckpt is not None:
        summary["flink.max-committed-checkpoint-id"] = str(ckpt)
    return {"snapshot_id": sid, "timestamp_ms": 1_000 * sid, "summary": summary}


def history(*commits: tuple[str, int]) -> list[dict[str, Any]]:
    return [snap(100 + i, job, ckpt) for i, (job, ckpt) in enumerate(commits)]


def test_clean_history_has_one_group_and_no_anomaly() -> None:
    out = analyze_lineage(history((A, 1), (A, 2), (A, 3)))
    assert out["jobs"] == [A]
    assert out["groups"] == [
        {
            "job_id": A,
            "operator_id": OP,
            "snapshots": 3,
            "first_snapshot_id": 100,
            "last_snapshot_id": 102,
            "first_timestamp_ms": 100_000,
            "last_timestamp_ms": 102_000,
            "first_checkpoint_id": 1,
            "last_checkpoint_id": 3,
            "max_checkpoint_id": 3,
        }
    ]
    for key in ("duplicates", "backwards", "interleavings", "missing_lineage", "out_of_band"):
        assert out[key] == [], key


def test_checkpoint_committed_twice_is_a_duplicate_not_a_rewind() -> None:
    out = analyze_lineage(history((A, 1), (A, 2), (A, 2), (A, 3)))
    assert out["duplicates"] == [
        {
            "job_id": A,
            "operator_id": OP,
            "checkpoint_id": 2,
            "snapshot_ids": [101, 102],
            "timestamps_ms": [101_000, 102_000],
            "count": 2,
        }
    ]
    assert out["backwards"] == []


def test_same_job_checkpoint_going_backwards() -> None:
    out = analyze_lineage(history((A, 10), (A, 20), (A, 30), (A, 25), (A, 26)))
    assert [
        (b["kind"], b["snapshot_id"], b["checkpoint_id"], b["previous_snapshot_id"], b["previous_checkpoint_id"])
        for b in out["backwards"]
    ] == [("same_job", 103, 25, 102, 30)]
    assert out["duplicates"] == []


def test_restore_from_latest_under_a_new_job_id_is_clean() -> None:
    out = analyze_lineage(history((A, 1), (A, 2), (A, 3), (B, 4), (B, 5)))
    assert out["backwards"] == [] and out["interleavings"] == []
    assert out["jobs"] == [A, B]


def test_new_job_starting_at_or_below_its_predecessor_is_a_rewind() -> None:
    out = analyze_lineage(history((A, 10), (A, 20), (A, 30), (B, 21), (B, 22)))
    [b] = out["backwards"]
    assert b["kind"] == "new_job"
    assert (b["job_id"], b["snapshot_id"], b["checkpoint_id"]) == (B, 103, 21)
    assert (b["previous_job_id"], b["previous_snapshot_id"], b["previous_checkpoint_id"]) == (A, 102, 30)
    assert b["replayed_checkpoints"] == {"from": 21, "to": 30}


def test_new_job_on_another_operator_is_not_compared() -> None:
    snaps = [snap(1, A, 30), snap(2, B, 1, op="ff" * 16)]
    assert analyze_lineage(snaps)["backwards"] == []


def test_end_of_input_checkpoint_never_counts_as_a_rewind() -> None:
    out = analyze_lineage(history((A, 5), (A, END_INPUT_CHECKPOINT_ID), (B, 1)))
    assert out["backwards"] == []


def test_interleaving_jobs_are_a_fork_with_the_pattern_as_evidence() -> None:
    out = analyze_lineage(history((A, 1), (A, 2), (F, 1), (A, 3), (F, 2)))
    [pair] = out["interleavings"]
    assert pair["job_ids"] == [A, F]
    assert pair["declared_by"] is None
    assert pair["pattern"] == [
        {"job_id": A, "snapshot_id": 101, "checkpoint_id": 2},
        {"job_id": F, "snapshot_id": 102, "checkpoint_id": 1},
        {"job_id": A, "snapshot_id": 103, "checkpoint_id": 3},
    ]
    assert pair["snapshot_counts"] == [3, 2]
    assert out["backwards"] == []  # interleaving writers are not a restore


def test_declared_job_id_marks_the_interleaving_case_insensitively() -> None:
    out = analyze_lineage(history((A, 1), (F, 1), (A, 2)), declared_job_ids=[F.upper()])
    assert out["interleavings"][0]["declared_by"] == F


def test_missing_lineage_and_out_of_band_writers_are_grouped() -> None:
    snaps = [
        snap(1, A, 1),
        snap(2, job=None, operation="overwrite", **{"engine-name": "spark"}),
        snap(3, job=None, operation="overwrite", **{"engine-name": "spark"}),
        snap(4, A, 2, op=None),
        snap(5, job=None, operation="replace"),  # compaction: maintenance
        snap(6, A, "not-a-number"),
    ]
    out = analyze_lineage(snaps)
    missing = {tuple(g["missing"]): (g["count"], g["snapshot_ids"]) for g in out["missing_lineage"]}
    assert missing == {
        ("flink.job-id", "flink.operator-id", "flink.max-committed-checkpoint-id"): (2, [2, 3]),
        ("flink.operator-id",): (1, [4]),
        ("flink.max-committed-checkpoint-id",): (1, [6]),
    }
    assert [(g["operation"], g["writer"], g["count"], g["snapshot_ids"]) for g in out["out_of_band"]] == [
        ("overwrite", "spark", 2, [2, 3])
    ]
    assert out["with_lineage"] == 3


def test_operation_may_be_top_level_or_an_enum() -> None:
    class Op:
        value = "replace"

    s = {"snapshot_id": 1, "operation": Op(), "summary": {}}
    assert lineage.operation_of(s) == "replace"
    assert analyze_lineage([s])["out_of_band"] == []


def test_lists_are_capped_and_the_rest_counted() -> None:
    snaps = [snap(i, A, 7) for i in range(1, 4)]
    snaps += [snap(100 + i, job=None, operation=f"op{i}") for i in range(lineage.LIST_CAP + 5)]
    out = analyze_lineage(snaps)
    assert len(out["out_of_band"]) == lineage.LIST_CAP
    assert out["truncated"]["out_of_band"] == 5
    assert out["duplicates"][0]["count"] == 3


def test_ten_thousand_snapshots_with_many_jobs_stay_linear() -> None:
    # every job writes 10 commits, none overlap: a long history of restores
    snaps = [snap(i, f"{i // 10:032x}", i) for i in range(10_000)]
    out = analyze_lineage(snaps)
    assert len(out["groups"]) == 1000 and out["interleavings"] == [] and out["backwards"] == []


def test_summary_values_are_read_as_text() -> None:
    s = {
        "snapshot_id": 1,
        "summary": {
            "flink.job-id": f" {A} ",
            "flink.operator-id": OP,
            "flink.max-committed-checkpoint-id": 42,
            "operation": "append",
        },
    }
    out = analyze_lineage([s])
    assert out["groups"][0]["job_id"] == A and out["groups"][0]["last_checkpoint_id"] == 42
    assert lineage.parse_checkpoint_id("-1") is None and lineage.parse_checkpoint_id(None) is None


def test_new_job_starting_at_the_same_checkpoint_is_a_rewind_and_one_above_is_not() -> None:
    [b] = analyze_lineage(history((A, 10), (A, 11), (B, 11), (B, 12)))["backwards"]
    assert (b["kind"], b["checkpoint_id"], b["previous_checkpoint_id"]) == ("new_job", 11, 11)
    assert analyze_lineage(history((A, 10), (A, 11), (B, 12), (B, 13)))["backwards"] == []
