"""Legacy ``flink-conf.yaml`` is read the way Flink 1.x reads it, not as YAML.

``GlobalConfiguration.loadYAMLResource`` (and ``loadLegacyYAMLResource`` of the later versions)
reads the file line by line: everything from the first ``#`` on is a comment, the rest is trimmed,
a blank line is skipped, the line is split at the first ``": "`` and key and value are trimmed. A
line it cannot split, or whose key or value is empty, is ignored with a warning in Flink's log.
Quotes are not removed: ``"60 s"`` is a value with quote characters in it. Before, the file went
through a YAML parser: quotes were removed, ``key:value`` (no space) became a YAML error that
dropped the whole deployment source, and a ``#`` in a value was kept."""

from __future__ import annotations

from pathlib import Path

from tests.deployrepo import CLEAN_FLINK_CONF, check, line_of, make_repo

CONF = "deploy/flink-conf.yaml"


def _repo(tmp_path: Path, conf: str, extra: dict[str, str] | None = None) -> Path:
    files: dict[str, str | bytes] = {CONF: conf, **(extra or {})}
    return make_repo(tmp_path / "repo", [CONF, *(extra or {})], files)


def test_a_clean_real_style_file_is_quiet(tmp_path: Path) -> None:
    code, findings = check(_repo(tmp_path, CLEAN_FLINK_CONF))
    assert (code, findings) == (0, [])


def test_a_line_without_space_after_the_colon_is_ignored_as_flink_ignores_it(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF.replace("execution.checkpointing.interval: 60000", "execution.checkpointing.interval:60000")
    repo = _repo(tmp_path, conf)
    code, findings = check(repo)
    assert code == 1
    line = line_of(repo / "contracts" / CONF, "interval:60000")
    [bad] = [f for f in findings if f["rule"] == "SW-DEPLOY-004"]
    assert (bad["file"], bad["line"], bad["severity"]) == ("contracts/" + CONF, line, "error")
    assert "': '" in bad["message"] and "ignores" in bad["message"]
    # Flink runs without the interval, so checkpointing is off: the rules say so
    assert any(f["rule"] == "SW-CKPT-001" for f in findings)
    # the whole source was not dropped: no SW-FACT-001
    assert not [f for f in findings if f["rule"] == "SW-FACT-001"]


def test_quotes_are_part_of_the_value_in_flink_1x(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF.replace("min-pause: 30 s", 'min-pause: "30 s"')
    repo = _repo(tmp_path, conf)
    code, findings = check(repo)
    assert code == 1
    [bad] = [f for f in findings if f["rule"] == "SW-DEPLOY-003"]
    assert bad["line"] == line_of(repo / "contracts" / CONF, "min-pause:")
    assert "quotes" in bad["message"]


def test_a_hash_starts_a_comment_even_inside_a_value(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF.replace(
        "state.checkpoints.dir: s3://lake-checkpoints/orders-enrichment",
        "state.checkpoints.dir: s3://lake-checkpoints/orders-enrichment#old",
    )
    code, findings = check(_repo(tmp_path, conf))
    assert (code, findings) == (0, [])  # Flink reads s3://lake-checkpoints/orders-enrichment


def test_yaml_flow_syntax_is_text_to_flink_1x_and_never_drops_the_file(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF + "env.java.opts: [unclosed\n"
    code, findings = check(_repo(tmp_path, conf))
    assert (code, findings) == (0, [])


def test_an_empty_key_is_reported_and_the_other_lines_count(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF + ": orphan-value\n"
    repo = _repo(tmp_path, conf)
    code, findings = check(repo)
    assert code == 1
    [bad] = [f for f in findings if f["rule"] == "SW-DEPLOY-004"]
    assert bad["line"] == line_of(repo / "contracts" / CONF, ": orphan-value")
    assert [f["rule"] for f in findings] == ["SW-DEPLOY-004"]


def test_a_nested_block_names_its_first_line_and_flink_reads_the_indented_key_as_written(tmp_path: Path) -> None:
    conf = CLEAN_FLINK_CONF + "state:\n  backend:\n    type: hashmap\n"
    repo = _repo(tmp_path, conf)
    code, findings = check(repo)
    assert code == 1
    [nested] = [f for f in findings if f["rule"] == "SW-DEPLOY-004"]
    assert nested["line"] == line_of(repo / "contracts" / CONF, "state:")
    assert nested["severity"] == "error"
    # Flink 1.x sets the key "type" from "    type: hashmap": a key it does not know
    [unknown] = [f for f in findings if f["rule"] == "SW-DEPLOY-001"]
    assert unknown["path"] == "type" and unknown["line"] == line_of(repo / "contracts" / CONF, "type: hashmap")


def test_a_config_yaml_stays_standard_yaml(tmp_path: Path) -> None:
    config = 'execution:\n  checkpointing:\n    interval: 60 s\n    min-pause: "30 s"\n'
    repo = make_repo(tmp_path / "repo", ["deploy/config.yaml"], {"deploy/config.yaml": config})
    _, findings = check(repo)
    assert not [f for f in findings if f["rule"] in ("SW-DEPLOY-003", "SW-DEPLOY-004", "SW-FACT-001")]
