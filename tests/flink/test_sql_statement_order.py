"""SQL scripts are read in statement order, as Flink's SQL client runs them: a ``SET`` applies to
the statements after it only. Each job (``INSERT``, a statement set, ...) is judged on the
settings it sees; a ``SET`` after the last job applies to nothing and SW-DEPLOY-004 says so
(``set-after-last-job``); ``init`` writes what the jobs see.

Before, every ``SET`` of a script applied to the whole script: a ``SET
'execution.checkpointing.interval' = '5min'`` after the only ``INSERT`` gave a false SW-CKPT-003.
Everything runs through the CLI on a repository whose flink-conf.yaml agrees with the contract
(checkpoint interval 60 s), with a SQL script listed after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import sw
from tests.conftest import NOW
from tests.deployrepo import CLEAN_FLINK_CONF, check, line_of, make_repo

SQL = "deploy/job.sql"
CREATE = "CREATE TABLE orders_raw (order_id BIGINT) WITH ('connector' = 'datagen');\n"


def _repo(tmp_path: Path, script: str) -> Path:
    return make_repo(
        tmp_path / "repo",
        ["deploy/flink-conf.yaml", SQL],
        {"deploy/flink-conf.yaml": CLEAN_FLINK_CONF, SQL: script},
    )


def _of(findings: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] == rule and f.get("source") == "deployment"]


def _line(repo: Path, needle: str) -> int:
    return line_of(repo / "contracts" / SQL, needle)


def test_a_set_after_the_only_insert_applies_to_nothing(tmp_path: Path) -> None:
    script = (
        CREATE
        + "INSERT INTO lake.sales.orders SELECT * FROM orders_raw;\n"
        + ("SET 'execution.checkpointing.interval' = '5min';\n")
    )
    repo = _repo(tmp_path, script)
    _, findings = check(repo)
    assert _of(findings, "SW-CKPT-003") == [], "the trailing SET was applied to the job"
    [late] = [f for f in _of(findings, "SW-DEPLOY-004") if f["evidence"]["code"] == "set-after-last-job"]
    assert (late["file"], late["line"], late["severity"]) == (f"contracts/{SQL}", _line(repo, "'5min'"), "warning")
    assert late["path"] == "execution.checkpointing.interval"
    assert f"INSERT at contracts/{SQL}:{_line(repo, 'INSERT INTO')}" in late["message"]
    assert "applies to nothing" in late["message"]


def test_each_job_sees_only_the_sets_before_it(tmp_path: Path) -> None:
    """The first job runs with 5 min, the second with 60 s (the contract's): only the first is
    wrong, and the finding points at the SET that job sees. Applying every SET to the whole script
    saw only the last one (60 s) and found nothing."""
    script = (
        "SET 'execution.checkpointing.interval' = '5 min';\n"
        + CREATE
        + "INSERT INTO lake.sales.orders SELECT * FROM orders_raw;\n"
        + "SET 'execution.checkpointing.interval' = '60 s';\n"
        + "INSERT INTO lake.sales.orders_copy SELECT * FROM orders_raw;\n"
    )
    repo = _repo(tmp_path, script)
    _, findings = check(repo)
    [f] = _of(findings, "SW-CKPT-003")
    assert (f["file"], f["line"], f["evidence"]["setting"]) == (f"contracts/{SQL}", _line(repo, "'5 min'"), "interval")
    assert not [f for f in _of(findings, "SW-DEPLOY-004") if f["evidence"]["code"] == "set-after-last-job"]


def test_two_jobs_that_both_differ_are_each_judged(tmp_path: Path) -> None:
    script = (
        "SET 'execution.checkpointing.interval' = '5 min';\n"
        + CREATE
        + "INSERT INTO a SELECT * FROM orders_raw;\n"
        + "SET 'execution.checkpointing.interval' = '2 min';\n"
        + "INSERT INTO b SELECT * FROM orders_raw;\n"
    )
    repo = _repo(tmp_path, script)
    _, findings = check(repo)
    got = sorted((f["line"], f["evidence"]["deployment_value"]) for f in _of(findings, "SW-CKPT-003"))
    assert got == [(_line(repo, "'5 min'"), 300_000), (_line(repo, "'2 min'"), 120_000)]


@pytest.mark.parametrize(
    "job",
    [
        "BEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM orders_raw;\nINSERT INTO b SELECT 1;\nEND;\n",
        "EXECUTE STATEMENT SET BEGIN\n  INSERT INTO a SELECT * FROM orders_raw;\n  INSERT INTO b SELECT 1;\nEND;\n",
        "EXECUTE INSERT INTO a SELECT * FROM orders_raw;\n",
        "INSERT OVERWRITE a SELECT * FROM orders_raw;\n",
        "CREATE TABLE copy WITH ('connector' = 'blackhole') AS SELECT * FROM orders_raw;\n",
        "EXECUTE PLAN '/plans/orders.json';\n",
    ],
    ids=["begin-statement-set", "execute-statement-set", "execute-insert", "insert-overwrite", "ctas", "plan"],
)
def test_every_form_of_a_job_ends_the_scope_of_earlier_sets(tmp_path: Path, job: str) -> None:
    """The SET before the job is applied (SW-CKPT-003 at its line); the one after is not (the
    interval it sets would match the contract) and is reported; comments and quoted semicolons do
    not move a line."""
    script = (
        "-- orders; the job below; /* not a comment start\n"
        "SET 'execution.checkpointing.interval' = '5 min'; /* ; */\n"
        + CREATE
        + job
        + "/* a block\n   comment; */ SET 'execution.checkpointing.interval' = '60 s';\n"
    )
    repo = _repo(tmp_path, script)
    _, findings = check(repo)
    [f] = _of(findings, "SW-CKPT-003")
    assert f["line"] == _line(repo, "'5 min'")
    [late] = [f for f in _of(findings, "SW-DEPLOY-004") if f["evidence"]["code"] == "set-after-last-job"]
    assert late["line"] == _line(repo, "'60 s'")


def test_a_set_inside_a_statement_set_is_an_error(tmp_path: Path) -> None:
    script = (
        CREATE
        + "BEGIN STATEMENT SET;\nINSERT INTO a SELECT * FROM orders_raw;\n"
        + "SET 'execution.checkpointing.interval' = '5 min';\nEND;\n"
    )
    repo = _repo(tmp_path, script)
    _, findings = check(repo)
    [f] = [f for f in _of(findings, "SW-DEPLOY-004") if f["evidence"]["code"] == "set-in-statement-set"]
    assert (f["line"], f["severity"]) == (_line(repo, "'5 min'"), "error")
    assert _of(findings, "SW-CKPT-003") == []


def test_the_job_named_after_the_contract_is_the_one_judged(tmp_path: Path) -> None:
    """Two jobs with their own pipeline.name: the contract (job orders-enrichment) is the first
    one's, whose settings agree; the other job's 5 min is not this contract's business."""
    script = (
        "SET 'pipeline.name' = 'orders-enrichment';\n"
        + CREATE
        + "INSERT INTO a SELECT * FROM orders_raw;\n"
        + "SET 'pipeline.name' = 'orders-audit';\n"
        + "SET 'execution.checkpointing.interval' = '5 min';\n"
        + "INSERT INTO b SELECT * FROM orders_raw;\n"
    )
    repo = _repo(tmp_path, script)
    _, findings = check(repo)
    assert _of(findings, "SW-CKPT-003") == []
    facts = sw("facts", "orders-enrichment", "--now", NOW, cwd=repo)
    assert facts.code == 0, facts
    jobs = facts.json()["facts"]["deployment"]["jobs"]
    assert [(j["line"], j["kind"], j["name"], j["selected"]) for j in jobs] == [
        (_line(repo, "INSERT INTO a"), "insert", "orders-enrichment", True),
        (_line(repo, "INSERT INTO b"), "insert", "orders-audit", False),
    ]
    assert jobs[1]["config"]["execution.checkpointing.interval"]["value"] == 300_000


def test_a_script_of_sets_only_still_configures_the_job(tmp_path: Path) -> None:
    """No job in the script (an init script for jobs started elsewhere): its SETs apply as before."""
    repo = _repo(tmp_path, "SET 'execution.checkpointing.interval' = '5 min';\n" + CREATE)
    _, findings = check(repo)
    [f] = _of(findings, "SW-CKPT-003")
    assert f["line"] == _line(repo, "'5 min'")
    assert not [f for f in _of(findings, "SW-DEPLOY-004") if f["evidence"]["code"] == "set-after-last-job"]


def test_sql_files_are_one_session_in_the_listed_order(tmp_path: Path) -> None:
    """An init script's SETs (listed first) apply to the jobs of the next script."""
    repo = make_repo(
        tmp_path / "repo",
        ["deploy/flink-conf.yaml", "deploy/init.sql", SQL],
        {
            "deploy/flink-conf.yaml": CLEAN_FLINK_CONF,
            "deploy/init.sql": "SET 'execution.checkpointing.interval' = '5 min';\n",
            SQL: CREATE + "INSERT INTO a SELECT * FROM orders_raw;\n",
        },
    )
    _, findings = check(repo)
    [f] = _of(findings, "SW-CKPT-003")
    assert f["file"] == "contracts/deploy/init.sql"


def test_init_writes_what_the_job_sees(tmp_path: Path) -> None:
    (tmp_path / "job.sql").write_text(
        "SET 'execution.checkpointing.interval' = '1 min';\n"
        + CREATE
        + "INSERT INTO a SELECT * FROM orders_raw;\n"
        + "SET 'execution.checkpointing.interval' = '5 min';\n",
        encoding="utf-8",
    )
    p = sw("init", "--from-deployment", "job.sql", "--job", "orders", "-o", "c.yaml", cwd=tmp_path)
    assert p.code == 0, p
    data = yaml.safe_load((tmp_path / "c.yaml").read_text(encoding="utf-8"))
    assert data["checkpoint"]["interval"] == "1m"
    assert "applies to nothing" in p.stderr, p


def test_init_leaves_out_what_the_jobs_disagree_on(tmp_path: Path) -> None:
    (tmp_path / "job.sql").write_text(
        "SET 'execution.checkpointing.interval' = '1 min';\n"
        + CREATE
        + "INSERT INTO a SELECT * FROM orders_raw;\n"
        + "SET 'execution.checkpointing.interval' = '5 min';\n"
        + "INSERT INTO b SELECT * FROM orders_raw;\n",
        encoding="utf-8",
    )
    p = sw("init", "--from-deployment", "job.sql", "--job", "orders", "-o", "c.yaml", cwd=tmp_path)
    assert p.code == 0, p
    data = yaml.safe_load((tmp_path / "c.yaml").read_text(encoding="utf-8"))
    assert "interval" not in (data.get("checkpoint") or {})
    assert "the SQL jobs disagree on execution.checkpointing.interval" in p.stderr, p
    assert "job.sql:3 sees 1m" in p.stderr and "job.sql:5 sees 5m" in p.stderr, p
