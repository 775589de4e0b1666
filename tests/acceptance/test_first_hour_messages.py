"""Messages and terminal manners a new user meets in the first hour, each through the real CLI:
NO_COLOR and --color, a tab in the indentation, a key at the wrong level, unit and rule-id typos,
an impossible date among other errors, unusable files counted and sent to stderr, remediation
text without hard line breaks, SW-TABLE-007 without a job id, a deployment key named as written,
the progress line's phase, and ``identifier_fields: []``."""

from __future__ import annotations

import datetime as dt
import json
import os
import pty
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import _SCRIPT, sw
from tests.conftest import CLEAN_CONTRACT, NOW, REPO
from tests.reporting import EXAMPLES

ESC = "\x1b["


def _contract(tmp_path: Path, text: str = CLEAN_CONTRACT, name: str = "orders.yaml") -> Path:
    p = tmp_path / "contracts" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


# ------------------------------------------------------------------------------------------ colour


def _on_a_terminal(*args: str, cwd: Path, env: dict[str, str]) -> str:
    """stdout of ``streamwarden ARGS`` written to a pseudo-terminal (stderr piped)."""
    master, slave = pty.openpty()
    full_env = {**os.environ, **env}
    try:
        proc = subprocess.Popen(
            [str(_SCRIPT), *args], cwd=cwd, env=full_env, stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
        )
        os.close(slave)
        chunks: list[bytes] = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=120)
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        os.close(master)
    out = b"".join(chunks).decode("utf-8", errors="replace")
    assert "Traceback" not in out + err, out + err
    return out


def _broken_pipeline(tmp_path: Path) -> None:
    _contract(tmp_path, CLEAN_CONTRACT.replace("  max_parallelism: 128\n", ""))


def test_no_color_turns_colour_off_on_a_terminal(tmp_path: Path) -> None:
    _broken_pipeline(tmp_path)
    coloured = _on_a_terminal("check", "--now", NOW, "contracts", cwd=tmp_path, env={"NO_COLOR": ""})
    assert ESC + "31m" in coloured  # a terminal without NO_COLOR: colour
    plain = _on_a_terminal("check", "--now", NOW, "contracts", cwd=tmp_path, env={"NO_COLOR": "1"})
    assert "SW-STATE-004" in plain and ESC not in plain


def test_color_never_and_always_override_the_terminal_and_no_color(tmp_path: Path) -> None:
    _broken_pipeline(tmp_path)
    never = _on_a_terminal("check", "--color", "never", "--now", NOW, "contracts", cwd=tmp_path, env={"NO_COLOR": ""})
    assert "SW-STATE-004" in never and ESC not in never
    always = sw("check", "--color", "always", "--now", NOW, "contracts", cwd=tmp_path)  # piped, NO_COLOR=1
    assert always.code == 1 and ESC + "31m" in always.stdout, always
    auto = sw("check", "--color", "auto", "--now", NOW, "contracts", cwd=tmp_path, env={"NO_COLOR": ""})
    assert auto.code == 1 and ESC not in auto.stdout  # not a terminal
    bad = sw("check", "--color", "sometimes", "contracts", cwd=tmp_path)
    assert bad.code == 2 and "--color" in bad.stderr


def test_the_commands_page_documents_color() -> None:
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "--color auto|always|never" in page and "NO_COLOR" in page


# -------------------------------------------------------------------------------- YAML and schema


def test_a_tab_in_the_indentation_says_tab(tmp_path: Path) -> None:
    p = _contract(tmp_path, "apiVersion: streamwarden/v1\nkind: PipelineContract\nmetadata:\n\tname: x\n")
    r = sw("validate", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 2, r
    assert f"contracts/orders.yaml:{_line_of(p, chr(9))}:" in r.stderr, r
    assert "tab" in r.stderr and "YAML does not allow tabs for indentation; use spaces" in r.stderr, r
    assert "cannot start any token" not in r.stderr


def test_a_key_at_the_wrong_level_names_where_it_belongs(tmp_path: Path) -> None:
    p = _contract(tmp_path, CLEAN_CONTRACT.replace("checkpoint:\n  mode:", "interval: 60s\ncheckpoint:\n  mode:"))
    r = sw("validate", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 2, r
    assert f"contracts/orders.yaml:{_line_of(p, 'interval: 60s')}: interval: unknown key 'interval'" in r.stderr, r
    assert "'interval' is allowed in checkpoint, not at the top level: did you mean 'checkpoint.interval'?" in (
        r.stderr
    ), r


def test_a_top_level_key_written_in_a_list_item_says_where_it_is_allowed(tmp_path: Path) -> None:
    text = CLEAN_CONTRACT.replace("      rewindable: true\n", "      rewindable: true\n      quality: strict\n", 1)
    p = _contract(tmp_path, text)
    r = sw("validate", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 2, r
    line = _line_of(p, "quality: strict")
    assert f"contracts/orders.yaml:{line}: job.sources[0].quality: unknown key 'quality'" in r.stderr, r
    assert (
        "hint: 'quality' is allowed at the top level, not in job.sources[0]; allowed in job.sources[0]: "
        "name, kind, topic, uid, rewindable, retention, retention_margin"
    ) in r.stderr, r
    assert "did you mean 'quality'" not in r.stderr  # the same name: no news to the user


@pytest.mark.parametrize(
    ("field", "written", "meant"),
    [
        ("interval", "10min", "10m"),
        ("interval", "30sec", "30s"),
        ("interval", "2hours", "2h"),
        ("interval", "1day", "1d"),
        ("interval", '"5 m"', "5m"),
        ("max_size", "512MB", "512MiB"),
    ],
)
def test_a_unit_typo_gets_a_did_you_mean(tmp_path: Path, field: str, written: str, meant: str) -> None:
    old = "interval: 60s" if field == "interval" else "max_size: 50GiB"
    _contract(tmp_path, CLEAN_CONTRACT.replace(old, f"{field}: {written}", 1))
    r = sw("validate", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 2, r
    assert f"did you mean '{meant}'?" in r.stderr, r
    if field == "max_size":
        assert "binary units" in r.stderr, r


def test_a_waiver_rule_id_typo_gets_a_did_you_mean(tmp_path: Path) -> None:
    waiver = "waivers:\n  - {rule: SW-RET-02, reason: migration, expires: 2027-01-31, approved_by: data-platform}\n"
    _contract(tmp_path, CLEAN_CONTRACT + waiver)
    r = sw("check", "--now", NOW, "--format", "json", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 1, r
    (f,) = [f for f in r.json()["findings"] if f["rule"] == "SW-WAIVER-001"]
    assert f["path"] == "waivers[0].rule"
    assert "did you mean SW-RET-002?" in f["message"], f


def test_an_impossible_date_does_not_hide_the_other_errors(tmp_path: Path) -> None:
    waiver = "waivers:\n  - {rule: SW-RET-002, reason: migration, expires: 2027-02-30, approved_by: data-platform}\n"
    p = _contract(tmp_path, CLEAN_CONTRACT.replace("interval: 60s", "interval: 60 seconds") + waiver)
    for command in (["validate"], ["check", "--now", NOW]):
        r = sw(*command, "contracts/orders.yaml", cwd=tmp_path)
        assert r.code == 2, r
        assert f"contracts/orders.yaml:{_line_of(p, 'expires:')}: waivers[0].expires:" in r.stderr, r
        assert "not a real calendar date" in r.stderr, r
        assert f"contracts/orders.yaml:{_line_of(p, '60 seconds')}: checkpoint.interval:" in r.stderr, r


def test_identifier_fields_may_be_empty(tmp_path: Path) -> None:
    _contract(tmp_path, CLEAN_CONTRACT.replace("identifier_fields: [order_id]", "identifier_fields: []"))
    r = sw("check", "--now", NOW, "--format", "json", "contracts/orders.yaml", cwd=tmp_path)
    assert r.code == 1, r  # valid; the upsert table now lacks its row identity
    assert [(f["rule"], f["path"]) for f in r.json()["findings"]] == [("SW-TABLE-004", "table.identifier_fields")]
    plain = CLEAN_CONTRACT.replace("identifier_fields: [order_id]", "identifier_fields: []")
    _contract(tmp_path, plain.replace('  properties:\n    write.upsert.enabled: "true"\n', ""))
    assert sw("validate", "contracts/orders.yaml", cwd=tmp_path).code == 0


# ------------------------------------------------------------------------------- unusable files


def test_unusable_files_are_counted_as_files_and_listed_on_stderr(tmp_path: Path) -> None:
    _contract(tmp_path)  # a good one
    _contract(tmp_path, CLEAN_CONTRACT.replace("60s", "60sec").replace("24h", "1day"), "two-errors.yaml")
    _contract(tmp_path, "apiVersion: streamwarden/v1\nkind: PipelineContract\n", "three-errors.yaml")
    r = sw("check", "--now", NOW, "contracts", cwd=tmp_path)
    assert r.code == 2, r
    assert "unusable input" not in r.stdout and "two-errors.yaml" not in r.stdout, r
    assert "two-errors.yaml:" in r.stderr and "three-errors.yaml:" in r.stderr, r
    assert r.stdout.rstrip().endswith("; 2 unusable files"), r
    j = sw("check", "--now", NOW, "--format", "json", "contracts", cwd=tmp_path)
    assert len(j.json()["errors"]) == 5, j  # every error, as before


# ---------------------------------------------------------------------------------- remediation


def test_remediation_has_no_hard_line_breaks_in_any_format(tmp_path: Path) -> None:
    r = sw("check", "--now", NOW, "--format", "json", *EXAMPLES, cwd=REPO)
    remediations = [f["remediation"] for f in r.json()["findings"] if f["remediation"]]
    assert remediations and all("\n" not in text for text in remediations), remediations
    junit = tmp_path / "r.xml"
    sarif = tmp_path / "r.sarif.json"
    sw("check", "--now", NOW, "--report", f"junit={junit}", "--report", f"sarif={sarif}", *EXAMPLES, cwd=REPO)
    for line in junit.read_text(encoding="utf-8").splitlines():
        if "fix: " in line:
            assert line.rstrip().endswith((".", ")")), line  # the whole remediation on its line
    rules = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["tool"]["driver"]["rules"]
    for rule in rules:
        remediation = rule["help"]["text"].split("Remediation: ", 1)[-1].split("\n\nExample:", 1)[0]
        assert "\n" not in remediation, rule["id"]


# --------------------------------------------------------------------------------- deployment keys


def test_a_deployment_finding_names_the_key_as_the_file_writes_it(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    conf = tmp_path / "contracts" / "flink-conf.yaml"
    conf.write_text("state.checkpoints.dir: s3://other/ckpt\n", encoding="utf-8")
    job = "  name: orders-enrichment\n  parallelism"
    _contract(
        tmp_path,
        CLEAN_CONTRACT.replace(job, "  name: orders-enrichment\n  deployment: [flink-conf.yaml]\n  parallelism"),
    )
    r = sw("check", "--now", NOW, "--format", "json", "contracts/orders.yaml", cwd=tmp_path)
    (f,) = [f for f in r.json()["findings"] if f["path"] == "execution.checkpointing.dir"]
    assert f["rule"] == "SW-DEPLOY-005" and f["line"] == 1
    assert "sets state.checkpoints.dir (execution.checkpointing.dir in Flink 2.x) to s3://other/ckpt" in f["message"]


# -------------------------------------------------------------------------------- progress phases


def test_the_progress_line_names_the_phase_that_runs(tmp_path: Path) -> None:
    from tests.fake_flink import fake_flink, slow

    _contract(tmp_path)
    with fake_flink() as fake:
        _, body = fake.routes["/jobs/overview"]
        fake.routes["/jobs/overview"] = slow(1.5, body)  # outlasts the first progress line (after 1 s)
        env = {"prod": {"flink": {"rest_url": fake.url, "timeout": "5s", "retries": 0}}}
        config = {"contracts": ["contracts/*.yaml"], "environments": env}
        (tmp_path / "streamwarden.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        r = sw("check", "--env", "prod", "--now", NOW, "--format", "json", "--verbose", cwd=tmp_path)
    lines = [line for line in r.stderr.splitlines() if "…" in line]
    assert lines, r
    assert "Flink" in lines[0] and "1/1" not in lines[0], r


# ------------------------------------------------------------------------ SW-TABLE-007 without job


def test_table007_says_what_is_missing_when_no_job_is_known(tmp_path: Path) -> None:
    pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")
    from tests.iceberg_tables import CLEAN_PROPERTIES, JOB_A, FlinkSink, Lake

    lake = Lake(tmp_path)
    table = lake.create_orders(dict(CLEAN_PROPERTIES))
    FlinkSink(lake, table, JOB_A).commit(1)
    lake.append(table)  # a batch job: no flink.* keys at all
    (tmp_path / "streamwarden.yaml").write_text(
        yaml.safe_dump({"contracts": ["contracts/*.yaml"], "environments": {"lake": {"iceberg": lake.environment()}}}),
        encoding="utf-8",
    )
    _contract(tmp_path, textwrap.dedent(_LINEAGE_CONTRACT))
    now = dt.datetime.fromtimestamp(lake.clock.now_ms / 1000 + 60, tz=dt.timezone.utc).isoformat()
    r = sw("check", "--env", "lake", "--now", now, "--format", "json", cwd=tmp_path)
    found: list[dict[str, Any]] = [f for f in r.json()["findings"] if f["rule"] == "SW-TABLE-007"]
    assert found, r
    message = found[0]["message"]
    assert "null" not in message, message
    assert "no flink.job-id" in message, message


_LINEAGE_CONTRACT = """\
    apiVersion: streamwarden/v1
    kind: PipelineContract
    metadata: {name: orders-enrichment, owner: payments-data}
    job: {name: orders-enrichment, max_parallelism: 128}
    table:
      catalog: lake
      identifier: sales.orders
      format_version: 2
      commit: {max_interval: 5m, lineage: required}
    """
