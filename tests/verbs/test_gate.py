"""`streamwarden gate`: contract + Iceberg + savepoint facts -> allow (0) or deny (1) with reasons;
unusable input exits 2; a savepoint or catalog that cannot be read denies (fails closed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.recovery_repo import DAY_MS, RecoveryRepo
from tests.savepoint_files import metadata_bytes, orders_job

from streamwarden.flink.uids import operator_id


@pytest.fixture
def repo(tmp_path: Path) -> RecoveryRepo:
    r = RecoveryRepo(tmp_path)
    r.commit(1, 20)
    return r


@pytest.fixture
def append_repo(tmp_path: Path) -> RecoveryRepo:
    """The same pipeline with an append-only (non-idempotent) sink."""
    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 20)
    return r


def _json(result: object) -> dict:
    return json.loads(result.output)  # type: ignore[attr-defined]


def _rules(doc: dict) -> set[str]:
    return {r["rule"] for r in doc["reasons"]}


def test_compatible_restore_is_allowed(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(20)
    result = repo.run("gate", "--restore-from", str(sp))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("gate: ALLOW orders-enrichment in prod")
    assert "savepoint of checkpoint 20, _metadata v6, 3 stateful operators" in result.output
    doc = _json(repo.run("gate", "--restore-from", str(sp), "--format", "json"))
    assert doc["decision"] == "allow" and doc["reasons"] == []
    assert doc["restore_from"]["checkpoint_id"] == 20
    assert doc["restore_from"]["table"]["status"] == "current"
    assert doc["sources"]["iceberg"] == {"configured": True, "available": True}


def test_restore_behind_the_table_into_an_idempotent_sink_is_allowed(repo: RecoveryRepo) -> None:
    result = repo.run("gate", "--restore-from", str(repo.savepoint(12)), "--format", "json")
    doc = _json(result)
    assert result.exit_code == 0, result.output
    assert doc["restore_from"]["table"]["status"] == "behind"
    assert doc["restore_from"]["table"]["duplicates"] is False


def test_job_that_lost_a_uid_is_denied_naming_the_orphan_and_the_closest_uid(repo: RecoveryRepo) -> None:
    repo.edit_contract("- uid: orders-dedup", "- uid: orders-dedupe")
    result = repo.run("gate", "--restore-from", str(repo.savepoint(20)), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = _json(result)
    assert _rules(doc) == {"SW-STATE-009"}
    reason = doc["reasons"][0]
    orphan = operator_id("orders-dedup")
    assert reason["evidence"]["operator_id"] == orphan
    assert f'holds state for operator {orphan} (uid "orders-dedup")' in reason["message"]
    assert 'closest declared uid: "orders-dedupe" at state.operators[0].uid (edit distance 1)' in reason["message"]
    assert reason["path"] == "state.operators[0].uid"
    assert reason["file"].endswith("contracts/orders.yaml") and reason["line"] > 1


def test_lost_uid_is_allowed_when_the_contract_accepts_non_restored_state(repo: RecoveryRepo) -> None:
    repo.edit_contract("- uid: orders-dedup", "- uid: orders-dedupe")
    repo.edit_contract("allow_non_restored_state: false", "allow_non_restored_state: true")
    result = repo.run("gate", "--restore-from", str(repo.savepoint(20)), "--format", "json")
    assert "SW-STATE-009" not in _rules(_json(result))


def test_changed_max_parallelism_is_denied(repo: RecoveryRepo) -> None:
    repo.edit_contract("max_parallelism: 128", "max_parallelism: 256")
    result = repo.run("gate", "--restore-from", str(repo.savepoint(20)), "--format", "json")
    assert result.exit_code == 1
    doc = _json(result)
    assert _rules(doc) == {"SW-STATE-010"}
    ids = {r["evidence"]["operator_id"] for r in doc["reasons"]}
    assert ids == {operator_id("orders-dedup"), operator_id("orders-source")}  # not the committer pinned to 1


def test_savepoint_older_than_its_retention_is_denied(repo: RecoveryRepo) -> None:
    result = repo.run("gate", "--restore-from", str(repo.savepoint(20, age_ms=8 * DAY_MS)), "--format", "json")
    assert result.exit_code == 1
    doc = _json(result)
    assert _rules(doc) == {"SW-REC-003"}
    assert "completed 8d ago, older than retention.savepoints.max_age 7d" in doc["reasons"][0]["message"]


def test_restore_behind_the_table_into_an_append_sink_without_rollback_target_is_denied(
    append_repo: RecoveryRepo,
) -> None:
    result = append_repo.run("gate", "--restore-from", str(append_repo.savepoint(12)), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = _json(result)
    assert _rules(doc) == {"SW-REC-002"}
    target = append_repo.sink.committed[12]
    message = doc["reasons"][0]["message"]
    assert "behind the table's max committed checkpoint 20: the job replays checkpoints 13..20 (8 commits" in message
    assert (
        f"roll the table back to snapshot {target} (checkpoint 12) first and name it with --rollback-to {target}"
        in message
    )
    assert doc["reasons"][0]["evidence"]["replay"]["checkpoints"] == list(range(13, 21))


def test_that_restore_is_allowed_once_the_rollback_target_is_named(append_repo: RecoveryRepo) -> None:
    target = append_repo.sink.committed[12]
    sp = str(append_repo.savepoint(12))
    result = append_repo.run("gate", "--restore-from", sp, "--rollback-to", str(target))
    assert result.exit_code == 0, result.output
    wrong = append_repo.sink.committed[15]
    doc = _json(append_repo.run("gate", "--restore-from", sp, "--rollback-to", str(wrong), "--format", "json"))
    assert _rules(doc) == {"SW-REC-002"}
    assert (
        f'the named rollback target "{wrong}" is not usable: snapshot {wrong} already holds replayed'
        in doc["reasons"][0]["message"]
    )


def test_rollback_target_named_by_tag(append_repo: RecoveryRepo) -> None:
    table = append_repo.lake.table()
    table.manage_snapshots().create_tag(append_repo.sink.committed[12], "before-incident").commit()
    result = append_repo.run(
        "gate", "--restore-from", str(append_repo.savepoint(12)), "--rollback-to", "before-incident"
    )
    assert result.exit_code == 0, result.output


def test_expired_snapshot_of_the_savepoint_checkpoint_is_denied(repo: RecoveryRepo) -> None:
    table = repo.lake.table()
    table.maintenance.expire_snapshots().by_ids([repo.sink.committed[c] for c in range(1, 14)]).commit()
    result = repo.run("gate", "--restore-from", str(repo.savepoint(12)), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = _json(result)
    assert "SW-RET-007" in _rules(doc)
    assert "has been expired" in next(r["message"] for r in doc["reasons"] if r["rule"] == "SW-RET-007")


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda d: (d / "_metadata").write_bytes(metadata_bytes(orders_job())[:90]), "truncated"),
        (lambda d: (d / "_metadata").write_bytes(b"\x00" * 128), "not a Flink _metadata file"),
        (
            lambda d: (d / "_metadata").write_bytes(metadata_bytes(orders_job(), version=2)),
            "unsupported _metadata format version 2",
        ),
        (lambda d: None, "has no _metadata file"),
        (lambda d: (d / "_metadata").mkdir(), "cannot read"),
    ],
    ids=["truncated", "corrupt", "unknown-version", "no-metadata", "unreadable"],
)
def test_unreadable_savepoint_denies_with_fact001(repo: RecoveryRepo, make: object, needle: str) -> None:
    d = repo.root / "broken-savepoint"
    d.mkdir()
    make(d)  # type: ignore[operator]
    result = repo.run("gate", "--restore-from", str(d), "--format", "json")
    assert result.exit_code == 1, result.output
    doc = _json(result)
    assert _rules(doc) == {"SW-FACT-001"}
    reason = doc["reasons"][0]
    assert reason["severity"] == "error" and reason["path"] == "facts.savepoint"
    assert needle in reason["message"]
    assert doc["sources"]["savepoint"]["available"] is False


def test_missing_savepoint_path_is_unusable_input(repo: RecoveryRepo) -> None:
    # a typo in --restore-from exits 2 naming the path; a savepoint that exists but cannot be read denies
    result = repo.run("gate", "--restore-from", str(repo.root / "nope"))
    assert result.exit_code == 2
    assert f"--restore-from {repo.root / 'nope'} does not exist" in result.output


def test_unreadable_catalog_fails_closed(repo: RecoveryRepo) -> None:
    (repo.root / "lake" / "catalog.db").unlink()
    result = repo.run("gate", "--restore-from", str(repo.savepoint(20)), "--format", "json")
    assert result.exit_code == 1
    doc = _json(result)
    assert "SW-FACT-001" in _rules(doc)
    assert any("iceberg facts could not be gathered" in r["message"] for r in doc["reasons"])


def test_stateful_pipeline_without_any_savepoint_is_denied(repo: RecoveryRepo) -> None:
    doc = _json(repo.run("gate", "--format", "json"))
    assert doc["decision"] == "deny"
    assert _rules(doc) == {"SW-REC-003"}
    assert doc["restore_from"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--env", "staging"), "unknown environment 'staging' (configured: prod)"),
        (("--contracts", "nowhere"), "nowhere"),
    ],
)
def test_unusable_input_exits_2(repo: RecoveryRepo, args: tuple[str, ...], message: str) -> None:
    result = repo.run("gate", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_unknown_pipeline_and_invalid_contract_exit_2(repo: RecoveryRepo) -> None:
    from click.testing import CliRunner

    from streamwarden.cli.recovery import gate

    result = CliRunner().invoke(gate, ["nope", "--env", "prod", "--config", str(repo.root / "streamwarden.yaml")])
    assert result.exit_code == 2 and "unknown pipeline 'nope' (known: orders-enrichment)" in result.output
    repo.edit_contract("interval: 60s", "interval: sixty")
    result = repo.run("gate", "--restore-from", str(repo.savepoint(20)))
    assert result.exit_code == 2 and "checkpoint.interval" in result.output


def test_the_installed_command_has_the_recovery_verbs(repo: RecoveryRepo) -> None:
    """gate, evidence and savepoint inspect are commands of the console script users run (a
    subprocess, not a test that registers them itself)."""
    from tests.cli import sw

    for args in (("gate", "--help"), ("evidence", "--help"), ("savepoint", "inspect", "--help")):
        p = sw(*args, cwd=repo.root)
        assert p.code == 0 and "Usage: streamwarden" in p.stdout, p
    p = sw(
        "gate", "orders-enrichment", "--env", "prod", "--config", str(repo.root / "streamwarden.yaml"),
        "--now", repo.now_arg(), "--restore-from", str(repo.savepoint(20)),
        cwd=repo.root,
    )  # fmt: skip
    assert p.code == 0, p


# ------------------------------------------------------------------ a scheduled audit (check --env)


def _audit(repo: RecoveryRepo, fake: object) -> dict:
    """`check --env prod` with Flink REST (the fake server, answering like Flink 2.3.0 for the
    running orders-enrichment job) and the real Iceberg table."""
    import yaml
    from click.testing import CliRunner
    from tests.conftest import invoke

    config = yaml.safe_load((repo.root / "streamwarden.yaml").read_text())
    config["environments"]["prod"]["flink"] = {"rest_url": fake.url, "retries": 0}  # type: ignore[attr-defined]
    (repo.root / "streamwarden.yaml").write_text(yaml.safe_dump(config))
    result = invoke(CliRunner(), "check", "--env", "prod", "--format", "json", "--now", repo.now_arg(), cwd=repo.root)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_a_scheduled_check_reports_a_retained_checkpoint_whose_snapshot_expired(repo: RecoveryRepo) -> None:
    # SW-RET-007 needs no savepoint file in an audit: Flink names the retained checkpoints and
    # savepoints, the table's branch ancestry tells whether their snapshots are still there
    from tests.fake_flink import CHECKPOINTS, fake_flink, healthy_routes
    from tests.iceberg_tables import JOB_A

    def entry(cid: int, savepoint: bool = False) -> dict:
        kind = "savepoint" if savepoint else "chk"
        path = f"file:/data/flink/{'savepoints' if savepoint else 'checkpoints/' + JOB_A}/{kind}-{cid}"
        return {**CHECKPOINTS["history"][0], "id": cid, "is_savepoint": savepoint, "external_path": path}

    routes = healthy_routes(JOB_A, "orders-enrichment")
    checkpoints = {
        **CHECKPOINTS,
        "latest": {**CHECKPOINTS["latest"], "completed": entry(20), "savepoint": entry(12, savepoint=True)},
        "history": [entry(20), entry(19)],
    }
    routes[f"/jobs/{JOB_A}/checkpoints"] = (200, checkpoints)
    with fake_flink() as fake:
        fake.routes = routes
        clean = _audit(repo, fake)
        assert "SW-RET-007" not in {f["rule"] for f in clean["findings"]}, clean["findings"]
        table = repo.lake.table()
        table.maintenance.expire_snapshots().by_ids([repo.sink.committed[c] for c in range(1, 14)]).commit()
        doc = _audit(repo, fake)
    found = [f for f in doc["findings"] if f["rule"] == "SW-RET-007"]
    assert len(found) == 1, doc["findings"]
    assert "retained savepoint file:/data/flink/savepoints/savepoint-12" in found[0]["message"]
    assert found[0]["path"] == "retention.snapshots.max_age"
