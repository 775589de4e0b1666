"""Bad input: a clear message naming the file and the line or field path, exit 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.conftest import CLEAN_CONTRACT, NOW, invoke


def _check(runner: CliRunner, path: Path) -> tuple[int, str]:
    r = invoke(runner, "check", str(path), "--now", NOW)
    return r.exit_code, r.output + (r.stderr if r.stderr_bytes is not None else "")


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_empty_file(runner: CliRunner, write) -> None:
    p = write("empty.yaml", "")
    code, out = _check(runner, p)
    assert code == 2
    assert f"{p}:1" in out and "empty" in out


def test_not_yaml(runner: CliRunner, write) -> None:
    p = write("c.yaml", "kind: PipelineContract\nmetadata: {name: [unclosed\njob: x\n")
    code, out = _check(runner, p)
    assert code == 2
    assert "not valid YAML" in out and f"{p}:3" in out


def test_top_level_list(runner: CliRunner, write) -> None:
    p = write("c.yaml", "- apiVersion: streamwarden/v1\n- kind: PipelineContract\n")
    code, out = _check(runner, p)
    assert code == 2
    assert "mapping at the top level, not a list" in out and str(p) in out


def test_invalid_utf8(runner: CliRunner, tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_bytes(b"apiVersion: streamwarden/v1\nkind: PipelineContract\nmetadata:\n  name: caf\xe9\n")
    code, out = _check(runner, p)
    assert code == 2
    assert "not valid UTF-8" in out and f"{p}:4" in out


def test_billion_laughs_is_refused_quickly(runner: CliRunner, write) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = write("c.yaml", "kind: PipelineContract\n" + "\n".join(lines) + "\n")
    code, out = _check(runner, p)
    assert code == 2
    assert "alias" in out and str(p) in out


def test_ten_thousand_deep_nesting(runner: CliRunner, write) -> None:
    p = write("c.yaml", "kind: PipelineContract\nx: " + "[" * 10_000 + "]" * 10_000 + "\n")
    code, out = _check(runner, p)
    assert code == 2
    assert "nesting deeper than 64" in out and str(p) in out


def test_fifty_megabyte_file(runner: CliRunner, tmp_path: Path) -> None:
    p = tmp_path / "big.yaml"
    with p.open("w") as fh:
        fh.write("apiVersion: streamwarden/v1\nkind: PipelineContract\ndescription: |\n")
        chunk = "  " + "x" * 1000 + "\n"
        for _ in range(50 * 1024):
            fh.write(chunk)
    code, out = _check(runner, p)
    assert code == 2
    assert "limit is 5 MiB" in out and str(p) in out


def test_unknown_key_with_did_you_mean(runner: CliRunner, write) -> None:
    text = CLEAN_CONTRACT.replace("  min_pause: 30s", "  min_puase: 30s")
    p = write("c.yaml", text)
    code, out = _check(runner, p)
    assert code == 2
    assert f"{p}:{_line_of(text, 'min_puase')}" in out
    assert "checkpoint.min_puase" in out and "unknown key 'min_puase'" in out
    assert "did you mean 'min_pause'?" in out


def test_wrong_type(runner: CliRunner, write) -> None:
    text = CLEAN_CONTRACT.replace("  max_concurrent: 1", "  max_concurrent: one")
    p = write("c.yaml", text)
    code, out = _check(runner, p)
    assert code == 2
    assert f"{p}:{_line_of(text, 'max_concurrent')}" in out and "checkpoint.max_concurrent" in out
    assert "must be an integer" in out


@pytest.mark.parametrize(
    ("value", "expect"),
    [("-5s", "negative"), ("10 minutes", "not a duration"), ("90", "not a duration"), ("1.5h", "not a duration")],
)
def test_bad_duration(runner: CliRunner, write, value: str, expect: str) -> None:
    text = CLEAN_CONTRACT.replace("  interval: 60s", f'  interval: "{value}"')
    p = write("c.yaml", text)
    code, out = _check(runner, p)
    assert code == 2
    assert f"{p}:{_line_of(text, '  interval:')}" in out and "checkpoint.interval" in out
    assert expect in out


def test_unknown_enum_value(runner: CliRunner, write) -> None:
    text = CLEAN_CONTRACT.replace("  mode: exactly_once", "  mode: exactly-once")
    p = write("c.yaml", text)
    code, out = _check(runner, p)
    assert code == 2
    assert f"{p}:{_line_of(text, '  mode: exactly-once')}" in out and "checkpoint.mode" in out
    assert "did you mean 'exactly_once'?" in out


def test_enum_case_is_normalized(runner: CliRunner, write) -> None:
    p = write("c.yaml", CLEAN_CONTRACT.replace("  mode: exactly_once", "  mode: EXACTLY_ONCE"))
    code, _ = _check(runner, p)
    assert code == 0


def test_duplicate_keys(runner: CliRunner, write) -> None:
    text = CLEAN_CONTRACT.replace("  interval: 60s\n", "  interval: 60s\n  interval: 30s\n")
    p = write("c.yaml", text)
    code, out = _check(runner, p)
    assert code == 2
    assert f"{p}:{_line_of(text, 'interval: 30s')}" in out and "duplicate key 'interval'" in out


def test_missing_api_version(runner: CliRunner, write) -> None:
    p = write("c.yaml", CLEAN_CONTRACT.replace("apiVersion: streamwarden/v1\n", ""))
    code, out = _check(runner, p)
    assert code == 2
    assert "missing required field 'apiVersion'" in out and f"{p}:1" in out


def test_path_that_does_not_exist(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    code, out = _check(runner, missing)
    assert code == 2
    assert str(missing) in out and "does not exist" in out


def test_directory_with_one_broken_contract_names_it(runner: CliRunner, write, tmp_path: Path) -> None:
    write("pipes/a/contract.yaml", CLEAN_CONTRACT)
    write(
        "pipes/b/contract.yaml",
        CLEAN_CONTRACT.replace("orders-enrichment", "b-pipe").replace("  ttl: 24h", "  ttl: soon"),
    )
    write("pipes/c/contract.yaml", CLEAN_CONTRACT.replace("orders-enrichment", "c-pipe"))
    write("pipes/a/deploy/notes.yaml", "just: some other yaml\n")
    r = invoke(runner, "check", str(tmp_path / "pipes"), "--now", NOW, "--format", "json")
    assert r.exit_code == 2
    import json

    doc = json.loads(r.stdout)
    assert doc["summary"]["pipelines"] == 2  # the good ones are still checked
    assert [e["file"] for e in doc["errors"]] == [str(tmp_path / "pipes/b/contract.yaml")]
    assert doc["errors"][0]["path"] == "state.operators[0].ttl"


def test_duplicate_pipeline_names(runner: CliRunner, write, tmp_path: Path) -> None:
    write("p/a.yaml", CLEAN_CONTRACT)
    write("p/b.yaml", CLEAN_CONTRACT)
    code, out = _check(runner, tmp_path / "p")
    assert code == 2
    assert "already used" in out and "metadata.name" in out


def test_no_traceback_from_a_real_process(tmp_path: Path) -> None:
    """The installed entry point, as a user runs it: a non-YAML file is one clear line on stderr."""
    p = tmp_path / "c.yaml"
    p.write_bytes(b"\x00\x01kind: [")
    env = {**os.environ, "STREAMWARDEN_DEBUG": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "streamwarden.cli", "check", str(p)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and f"{p}:1" in out and "not valid YAML" in out


def test_bad_flag_is_exit_2(runner: CliRunner, write) -> None:
    p = write("c.yaml", CLEAN_CONTRACT)
    r = invoke(runner, "check", str(p), "--fail-on", "sometimes")
    assert r.exit_code == 2


def test_config_spark_read_mode_is_accepted_and_a_typo_is_named(runner: CliRunner, tmp_path: Path) -> None:
    # docs/facts-data.md documents spark.read (files | catalog) and spark.catalog
    (tmp_path / "c.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    good = "environments:\n  prod:\n    spark:\n      master: local[2]\n      read: catalog\n      catalog: lake\n"
    (tmp_path / "streamwarden.yaml").write_text(good, encoding="utf-8")
    r = invoke(runner, "check", "c.yaml", "--now", NOW, cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (tmp_path / "streamwarden.yaml").write_text(good.replace("read: catalog", "read: catalogue"), encoding="utf-8")
    r = invoke(runner, "check", "c.yaml", "--now", NOW, cwd=tmp_path)
    assert r.exit_code == 2, r.output
    assert "streamwarden.yaml:5" in r.output and "environments.prod.spark.read" in r.output
    assert "did you mean 'catalog'?" in r.output
