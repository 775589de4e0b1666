"""The recovery ledger through the real CLI (`gate --record`, `evidence --record`, `--note`,
`--tag`) on a real PyIceberg SQL catalog and real savepoint files: one row per decision, read back
with PyIceberg and with Spark SQL; a retry writes no row; a ledger that cannot be written exits 2
and writes nothing; the restore tag; hostile notes kept as given and never shown; the read side
(`input.ledger`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import Proc, sw
from tests.conftest import REPO
from tests.data_tables import spark  # noqa: F401  (the session fixture)
from tests.recovery_repo import RecoveryRepo

DOCS = REPO / "docs" / "ledger.md"

LEDGER = "streamwarden.ledger"


def _configure(repo: RecoveryRepo, ledger: dict[str, Any] | None, *, env_ledger: dict[str, Any] | None = None) -> None:
    config = yaml.safe_load((repo.root / "streamwarden.yaml").read_text())
    if ledger is not None:
        config["ledger"] = ledger
    if env_ledger is not None:
        config["environments"]["prod"]["ledger"] = env_ledger
    (repo.root / "streamwarden.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


@pytest.fixture
def repo(tmp_path: Path) -> RecoveryRepo:
    """An upsert table (a replay is idempotent: the gate allows) that committed checkpoints 1..20,
    and a ledger in the same catalog."""
    r = RecoveryRepo(tmp_path, upsert=True)
    r.commit(1, 20)
    _configure(r, {"catalog": "lake", "table": LEDGER})
    return r


@pytest.fixture
def incident(tmp_path: Path) -> RecoveryRepo:
    """An append-only table: restoring from checkpoint 12 duplicates 13..20 (the gate denies)."""
    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 20)
    _configure(r, {"catalog": "lake", "table": LEDGER})
    return r


def _run(repo: RecoveryRepo, verb: str, *args: str) -> Proc:
    return sw(
        verb,
        "orders-enrichment",
        "--env",
        "prod",
        "--config",
        str(repo.root / "streamwarden.yaml"),
        "--now",
        repo.now_arg(),
        *args,
        cwd=repo.root,
    )


def _rows(repo: RecoveryRepo) -> list[dict[str, Any]]:
    table = repo.lake.catalog.load_table(LEDGER)
    rows: list[dict[str, Any]] = table.scan().to_arrow().to_pylist()
    return rows


def _ledger_exists(repo: RecoveryRepo) -> bool:
    return bool(repo.lake.catalog.table_exists(LEDGER))


def test_gate_record_writes_one_row_read_back_with_pyiceberg(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    evidence = _run(repo, "evidence", "--restore-from", str(sp), "--format", "json").json()
    gate = _run(repo, "gate", "--restore-from", str(sp), "--record", "--note", "restore after the 02:00 outage")
    assert gate.code == 0, gate
    assert "recorded decision" in gate.stderr
    rows = _rows(repo)
    assert len(rows) == 1
    row = rows[0]
    committed = repo.sink.committed
    assert row["decision_id"] in gate.stderr and len(row["decision_id"]) == 20
    assert (row["pipeline"], row["environment"], row["verb"], row["decision"]) == (
        "orders-enrichment",
        "prod",
        "gate",
        "allow",
    )
    assert row["reasons"] == []
    assert row["savepoint_path"] == evidence["candidate"]["location"]
    assert (row["checkpoint_id"], row["job_id"]) == (12, "a" * 32)
    assert row["table_identifier"] == "sales.orders"
    assert row["restore_snapshot_id"] == committed[12]
    assert (row["replay_from_checkpoint"], row["replay_to_checkpoint"]) == (13, 20)
    assert row["replay_snapshot_ids"] == [committed[c] for c in range(13, 21)]
    assert row["duplicate_risk"] == "idempotent"
    assert row["rollback_target_snapshot_id"] == committed[12]
    assert row["consumers"] == [
        {
            "name": "finance-dashboard",
            "contact": "#finance-data",
            "freshness": "30m",
            # the snapshot of checkpoint 12 is 9 commits (minutes) and the 60 s to --now old: 10 min,
            # inside the 30 min promise
            "freshness_lost_ms": 0,
        }
    ]
    assert row["notified"] == []
    assert row["note"] == "restore after the 02:00 outage"
    assert row["tool_version"]
    assert row["recorded_at"].tzinfo is not None
    kept = json.loads(row["evidence_json"])
    assert kept["verdict"]["decision"] == "allow" and kept["candidate"]["checkpoint_id"] == 12


def test_a_retry_of_the_same_decision_writes_no_second_row(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    first = _run(repo, "gate", "--restore-from", str(sp), "--record")
    assert first.code == 0, first
    snapshots = len(repo.lake.catalog.load_table(LEDGER).metadata.snapshots)
    again = _run(repo, "gate", "--restore-from", str(sp), "--record")
    assert again.code == 0, again
    assert "already recorded" in again.stderr
    assert len(_rows(repo)) == 1
    assert len(repo.lake.catalog.load_table(LEDGER).metadata.snapshots) == snapshots  # no commit at all
    other = _run(repo, "gate", "--restore-from", str(sp), "--record", "--note", "a second look")
    assert other.code == 0 and "recorded decision" in other.stderr, other
    assert len(_rows(repo)) == 2  # another note is another decision


def test_a_denied_gate_records_the_deny_and_exits_with_the_deny_code(incident: RecoveryRepo) -> None:
    sp = incident.savepoint(12)
    gate = _run(incident, "gate", "--restore-from", str(sp), "--record")
    assert gate.code == 1, gate
    (row,) = _rows(incident)
    assert (row["decision"], row["reasons"], row["duplicate_risk"]) == ("deny", ["SW-REC-002"], "duplicates")


def test_evidence_record_is_a_recorded_row_with_the_record_as_json(incident: RecoveryRepo) -> None:
    sp = incident.savepoint(12)
    out = _run(incident, "evidence", "--restore-from", str(sp), "--format", "json", "--record")
    assert out.code == 0, out
    (row,) = _rows(incident)
    assert (row["verb"], row["decision"], row["reasons"]) == ("evidence", "recorded", ["SW-REC-002"])
    assert json.loads(row["evidence_json"]) == out.json()


def test_failing_catalog_writes_nothing_and_exits_2(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    config = yaml.safe_load((repo.root / "streamwarden.yaml").read_text())
    config["environments"]["prod"]["iceberg"]["catalogs"]["ledgers"] = {
        "type": "sql",
        "uri": "sqlite:///gone/ledger.db",
        "warehouse": "gone/warehouse",
    }
    config["ledger"] = {"catalog": "ledgers", "table": LEDGER}
    (repo.root / "streamwarden.yaml").write_text(yaml.safe_dump(config))
    out = _run(repo, "gate", "--restore-from", str(sp), "--record")
    assert out.code == 2, out
    assert "ledger streamwarden.ledger in catalog 'ledgers' cannot be opened" in out.stderr
    assert "does not exist" in out.stderr
    assert not (repo.root / "gone").exists()


def test_unreadable_ledger_exits_2_and_leaves_the_ledger_as_it_was(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    assert _run(repo, "gate", "--restore-from", str(sp), "--record").code == 0
    metadata = Path(repo.lake.catalog.load_table(LEDGER).metadata_location.removeprefix("file://"))
    good = metadata.read_bytes()
    metadata.write_text("{ not iceberg metadata")
    out = _run(repo, "gate", "--restore-from", str(sp), "--record", "--note", "another decision")
    assert out.code == 2, out
    assert "ledger streamwarden.ledger in catalog 'lake' cannot be opened" in out.stderr
    metadata.write_bytes(good)
    assert len(_rows(repo)) == 1


def test_record_without_a_ledger_exits_2_before_gathering(tmp_path: Path) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 3)
    out = _run(repo, "gate", "--record")
    assert out.code == 2, out
    assert "--record needs a ledger, and environment 'prod' has none" in out.stderr
    assert "ledger: {catalog: NAME, table: NAMESPACE.TABLE}" in out.stderr
    assert not repo.lake.catalog.table_exists(LEDGER)


def test_note_and_tag_need_record(repo: RecoveryRepo) -> None:
    assert "--note is kept in the ledger row: it needs --record" in _run(repo, "gate", "--note", "x").stderr
    out = _run(repo, "gate", "--tag")
    assert out.code == 2 and "--tag marks the recorded decision's restore point" in out.stderr
    assert _run(repo, "evidence", "--note", "x").code == 2
    assert not _ledger_exists(repo)


def test_ledger_catalog_not_in_the_environment_is_exit_2_with_its_line(repo: RecoveryRepo) -> None:
    _configure(repo, {"catalog": "warehouse", "table": LEDGER})
    out = _run(repo, "gate")
    assert out.code == 2, out
    assert "streamwarden.yaml:" in out.stderr and "ledger.catalog" in out.stderr
    assert "the ledger's catalog 'warehouse' is not a catalog of environment 'prod'" in out.stderr


def test_ledger_table_without_namespace_is_a_schema_error(repo: RecoveryRepo) -> None:
    _configure(repo, None, env_ledger={"catalog": "lake", "table": "ledger"})
    out = _run(repo, "gate")
    assert out.code == 2, out
    assert "environments.prod.ledger.table" in out.stderr


def test_environment_ledger_wins_over_the_top_level_one(repo: RecoveryRepo) -> None:
    _configure(repo, None, env_ledger={"catalog": "lake", "table": "ops.recoveries"})
    out = _run(repo, "gate", "--restore-from", str(repo.savepoint(12)), "--record")
    assert out.code == 0, out
    assert "ledger ops.recoveries" in out.stderr
    assert repo.lake.catalog.table_exists("ops.recoveries") and not _ledger_exists(repo)


def test_tag_marks_the_restore_snapshot_once(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    out = _run(repo, "gate", "--restore-from", str(sp), "--record", "--tag")
    assert out.code == 0, out
    (row,) = _rows(repo)
    name = f"streamwarden-restore-{row['decision_id']}"
    assert f"tagged the restore point as {name}" in out.stderr
    ref = repo.lake.table().metadata.refs[name]
    assert (str(ref.snapshot_ref_type), ref.snapshot_id) == ("tag", repo.sink.committed[12])
    assert ref.max_ref_age_ms == 3 * 86_400_000  # the contract's retention.rollback_window: 3d
    again = _run(repo, "gate", "--restore-from", str(sp), "--record", "--tag")
    assert again.code == 0 and "already at the restore point" in again.stderr, again
    assert len(_rows(repo)) == 1


def test_tag_at_another_snapshot_exits_2_and_records_nothing(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    first = _run(repo, "gate", "--restore-from", str(sp), "--record", "--tag")
    (row,) = _rows(repo)
    name = f"streamwarden-restore-{row['decision_id']}"
    assert first.code == 0, first
    table = repo.lake.table()
    table.manage_snapshots().remove_tag(name).create_tag(repo.sink.committed[5], name).commit()
    # the ledger is dropped so that the retry would create it and write a row if it got that far
    repo.lake.catalog.purge_table(LEDGER)
    out = _run(repo, "gate", "--restore-from", str(sp), "--record", "--tag")
    assert out.code == 2, out
    assert f"already has a tag {name} at snapshot {repo.sink.committed[5]}" in out.stderr
    assert repo.lake.table().metadata.refs[name].snapshot_id == repo.sink.committed[5]
    assert not _ledger_exists(repo)


def test_tag_without_a_rollback_window_never_expires(tmp_path: Path) -> None:
    repo = RecoveryRepo(tmp_path, upsert=True)
    (line,) = [x for x in repo.contract_text.splitlines(keepends=True) if "rollback_window: 3d" in x]
    repo.edit_contract(line, "")
    repo.commit(1, 20)
    _configure(repo, {"catalog": "lake", "table": LEDGER})
    out = _run(repo, "gate", "--restore-from", str(repo.savepoint(12)), "--record", "--tag")
    assert out.code == 0, out
    (row,) = _rows(repo)
    ref = repo.lake.table().metadata.refs[f"streamwarden-restore-{row['decision_id']}"]
    assert ref.max_ref_age_ms is None  # the table's max-ref-age applies (Iceberg's default: forever)


def test_denied_gate_records_but_tags_nothing(incident: RecoveryRepo) -> None:
    out = _run(incident, "gate", "--restore-from", str(incident.savepoint(12)), "--record", "--tag")
    assert out.code == 1, out
    assert "no tag streamwarden-restore-" in out.stderr and "the gate denied" in out.stderr
    assert len(_rows(incident)) == 1
    assert not [n for n in incident.lake.table().metadata.refs if n.startswith("streamwarden-restore-")]


HOSTILE_NOTES = [
    "::error file=x::owned",
    "ok\n::add-mask::x\n::warning::y",
    "\x1b[2J\x1b[31mred\x1b]8;;http://evil.example\x07link",
    "token ghp_" + "A" * 36 + " password=hunter2hunter2",
]


@pytest.mark.parametrize("note", HOSTILE_NOTES)
def test_hostile_note_is_stored_as_given_and_never_shown(repo: RecoveryRepo, note: str) -> None:
    out = _run(repo, "gate", "--restore-from", str(repo.savepoint(12)), "--record", "--note", note)
    assert out.code == 0, out
    (row,) = _rows(repo)
    assert row["note"] == note
    for line in note.splitlines():
        assert line not in out.output
    assert "\x1b" not in out.output
    assert not any(line.startswith("::") for line in out.output.splitlines())
    assert "hunter2hunter2" not in out.output and "ghp_" not in out.output


def test_input_ledger_holds_the_rows_of_the_table(repo: RecoveryRepo) -> None:
    before = _run(repo, "facts", "--env", "prod")
    assert before.code == 0, before
    assert before.json()["ledger"] == {"configured": True, "available": True, "table": LEDGER, "rows": []}
    assert before.json()["facts"]["ledger"]["exists"] is False
    sp = repo.savepoint(12)
    assert _run(repo, "gate", "--restore-from", str(sp), "--record").code == 0
    doc = _run(repo, "facts", "--env", "prod").json()
    (row,) = _rows(repo)
    (seen,) = doc["ledger"]["rows"]
    assert seen["decision_id"] == row["decision_id"]
    assert seen["restore_snapshot_id"] == repo.sink.committed[12]
    assert seen["replay_snapshot_ids"] == [repo.sink.committed[c] for c in range(13, 21)]
    assert seen["recorded_at_ms"] == int(row["recorded_at"].timestamp() * 1000)
    assert (seen["verb"], seen["decision"], seen["table_identifier"]) == ("gate", "allow", "sales.orders")


def test_input_ledger_is_not_configured_without_a_ledger(tmp_path: Path) -> None:
    repo = RecoveryRepo(tmp_path)
    repo.commit(1, 3)
    doc = _run(repo, "facts", "--env", "prod").json()
    assert doc["ledger"] == {"configured": False, "available": False, "rows": []}
    static = sw("facts", "orders-enrichment", "--config", str(repo.root / "streamwarden.yaml"), cwd=repo.root).json()
    assert static["ledger"]["configured"] is False


def test_unreadable_ledger_denies_the_gate_with_sw_fact_001(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    assert _run(repo, "gate", "--restore-from", str(sp), "--record").code == 0
    metadata = Path(repo.lake.catalog.load_table(LEDGER).metadata_location.removeprefix("file://"))
    metadata.write_text("garbage")
    out = _run(repo, "gate", "--restore-from", str(sp), "--format", "json")
    assert out.code == 1, out
    facts = [r for r in out.json()["reasons"] if r["rule"] == "SW-FACT-001"]
    assert [r["path"] for r in facts] == ["facts.ledger"]


def ledger_queries(view: str) -> dict[str, str]:
    """The Spark SQL of docs/ledger.md, by its question (the heading above each ```sql block),
    with the ledger table's name replaced by ``view``."""
    out: dict[str, str] = {}
    question = None
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            question = line[4:].strip().rstrip("?").lower()
        elif line.strip() == "```sql" and question:
            end = lines.index("```", i + 1)
            out[question] = "\n".join(lines[i + 1 : end]).replace("lake.streamwarden.ledger", view).rstrip(";")
            i = end
        i += 1
    return out


def test_ledger_read_back_with_spark_sql_answers_the_docs_questions(
    repo: RecoveryRepo,
    spark: Any,  # noqa: F811
) -> None:
    """The docs' queries (docs/ledger.md) on the ledger's files: which savepoint was used, which
    snapshots correspond, which consumers were told."""
    sp = repo.savepoint(12)
    assert _run(repo, "gate", "--restore-from", str(sp), "--record", "--note", "spark").code == 0
    table = repo.lake.catalog.load_table(LEDGER)
    files = [t.file.file_path for t in table.scan().plan_files()]
    spark.read.parquet(*files).createOrReplaceTempView("ledger")
    (row,) = _rows(repo)
    queries = ledger_queries("ledger")
    used = spark.sql(queries["which savepoint was used"]).collect()
    assert [(r["savepoint_path"], r["checkpoint_id"], r["job_id"]) for r in used] == [
        (row["savepoint_path"], 12, "a" * 32)
    ]
    snaps = spark.sql(queries["which snapshots correspond"]).collect()
    assert [(r["restore_snapshot_id"], list(r["replay_snapshot_ids"])) for r in snaps] == [
        (repo.sink.committed[12], [repo.sink.committed[c] for c in range(13, 21)])
    ]
    told = spark.sql(queries["which consumers were told"]).collect()
    assert [(r["consumer"], r["contact"], r["told"]) for r in told] == [("finance-dashboard", "#finance-data", False)]


def test_evidence_timeline_shows_the_ledger_rows(repo: RecoveryRepo) -> None:
    sp = repo.savepoint(12)
    assert _run(repo, "gate", "--restore-from", str(sp), "--record").code == 0
    (row,) = _rows(repo)
    md = _run(repo, "evidence", "--restore-from", str(sp)).stdout
    timeline = md[md.index("```mermaid") :]
    timeline = timeline[: timeline.index("```", 3)]
    assert f'L1[/"ledger: gate allow<br/>decision {row["decision_id"]}<br/>recorded ' in timeline
    assert 'L1 -. "restored to" .-> M' in timeline  # M: the snapshot of checkpoint 12
    assert "class L1 ledger" in timeline
    gate_md = _run(repo, "gate", "--restore-from", str(sp), "--format", "markdown").stdout
    assert 'L1 -. "restored to" .-> M' in gate_md
