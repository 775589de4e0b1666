"""Flink knowledge: value syntax as Flink parses it, the key table, and SQL SET statements."""

from __future__ import annotations

import pytest

from streamwarden.flink.config import (
    BY_KEY,
    OPTIONS,
    KeyStatus,
    ValueType,
    auto_max_parallelism,
    explicit_defaults,
    is_map_key,
    lookup,
    suggestion,
)
from streamwarden.flink.sql import parse_sql_settings
from streamwarden.flink.values import (
    FlinkValueError,
    parse_bool,
    parse_duration_ms,
    parse_enum,
    parse_int,
    parse_memory_bytes,
    parse_name,
)

# --- durations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("60000", 60_000),  # a bare number is milliseconds
        ("0", 0),
        ("500ms", 500),
        ("500 ms", 500),
        ("60 s", 60_000),
        ("60s", 60_000),
        ("3 secs", 3_000),
        ("1 second", 1_000),
        ("2 seconds", 2_000),
        ("1 min", 60_000),
        ("1m", 60_000),
        ("10 minutes", 600_000),
        ("10 MINUTES", 600_000),  # unit labels are case-insensitive
        ("2 h", 7_200_000),
        ("1 hour", 3_600_000),
        ("3 hours", 10_800_000),
        ("1d", 86_400_000),
        ("7 days", 604_800_000),
        ("  5 min  ", 300_000),  # surrounding whitespace
        ("1 milli", 1),
        ("250 millis", 250),
        ("2 milliseconds", 2),
        ("1500 µs", 1),  # truncated to whole milliseconds, like Duration.toMillis
        ("1500 us", 1),
        ("1500 micros", 1),
        ("999999 ns", 0),
        ("2000000 nanoseconds", 2),
        ("PT1M", 60_000),  # ISO-8601, which Flink 2.x accepts
        ("pt1m", 60_000),
        ("PT10M", 600_000),
        ("PT0.5S", 500),
        ("PT1H30M", 5_400_000),
        ("P1D", 86_400_000),
        ("P1DT2H", 93_600_000),
        ("+PT1S", 1_000),
    ],
)
def test_durations_parse_like_flink(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1h 30min", "one number and one unit"),
        ("ten minutes", "does not start with a number"),
        ("", "empty value"),
        ("   ", "empty value"),
        ("60 secondz", "unit 'secondz'"),
        ("1.5 s", "unit '.5 s'"),  # Flink takes integers only
        ("-1 s", "does not start with a number"),
        ("-PT1M", "negative duration"),
        ("PT", "is not a duration"),
        ("P1H", "is not a duration"),  # hours need the T
        ("99999999999999999999", "does not fit in 64 bits"),
        ("9223372036854775807 d", "overflows"),
    ],
)
def test_durations_flink_refuses(text: str, message: str) -> None:
    with pytest.raises(FlinkValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_duration_ms(text)


def test_duration_rejects_non_strings() -> None:
    with pytest.raises(FlinkValueError):
        parse_duration_ms(60)  # type: ignore[arg-type]


# --- memory sizes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1024", 1024),  # no unit: bytes
        ("12 b", 12),
        ("12 bytes", 12),
        ("1k", 1024),
        ("1 kb", 1024),
        ("2 kibibytes", 2048),
        ("256 mb", 256 * 1024**2),
        ("256m", 256 * 1024**2),
        ("256 MB", 256 * 1024**2),  # binary and case-insensitive
        ("1g", 1024**3),
        ("1 GB", 1024**3),
        ("3 gibibytes", 3 * 1024**3),
        ("1t", 1024**4),
        ("2 tb", 2 * 1024**4),
    ],
)
def test_memory_sizes_parse_like_flink(text: str, size: int) -> None:
    assert parse_memory_bytes(text) == size


@pytest.mark.parametrize("text", ["4 GiBs", "lots", "1.5g", "", "4Gi", "9999999999 tb"])
def test_memory_sizes_flink_refuses(text: str) -> None:
    with pytest.raises(FlinkValueError):
        parse_memory_bytes(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [("2048m", 2048 * 1024**2), ("4Gi", 4 * 1024**3), ("512Mi", 512 * 1024**2), ("1.5Gi", 1536 * 1024**2)],
)
def test_operator_memory_accepts_kubernetes_quantities(text: str, size: int) -> None:
    assert parse_memory_bytes(text, kubernetes=True) == size


def test_operator_memory_still_refuses_nonsense() -> None:
    with pytest.raises(FlinkValueError, match="Kubernetes quantity"):
        parse_memory_bytes("lots", kubernetes=True)


# --- booleans, integers, enums, names ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"), [("true", True), ("TRUE", True), ("False", False), (" false ", False), (True, True)]
)
def test_booleans(text: str | bool, value: bool) -> None:
    assert parse_bool(text) is value


@pytest.mark.parametrize("text", ["yes", "no", "on", "1", "0", ""])
def test_booleans_flink_refuses(text: str) -> None:
    with pytest.raises(FlinkValueError, match="only true or false"):
        parse_bool(text)


def test_integers() -> None:
    assert parse_int("3") == 3
    assert parse_int(" +7 ") == 7
    assert parse_int("-1", minimum=-1) == -1
    for bad in ("3.0", "three", "2147483648", ""):
        with pytest.raises(FlinkValueError):
            parse_int(bad)
    with pytest.raises(FlinkValueError, match="smallest value"):
        parse_int("0", minimum=1)
    with pytest.raises(FlinkValueError):
        parse_int(True)


def test_enums_match_constant_names_case_insensitively() -> None:
    constants = ("EXACTLY_ONCE", "AT_LEAST_ONCE")
    assert parse_enum("EXACTLY_ONCE", constants) == "exactly_once"
    assert parse_enum("at_least_once", constants) == "at_least_once"
    with pytest.raises(FlinkValueError, match="write EXACTLY_ONCE"):
        parse_enum("exactly-once", constants)  # Flink refuses the dashed form
    with pytest.raises(FlinkValueError, match="is not one of EXACTLY_ONCE, AT_LEAST_ONCE"):
        parse_enum("twice", constants)


def test_names_and_factory_classes() -> None:
    names = {"hashmap": "hashmap", "rocksdb": "rocksdb"}
    assert parse_name("RocksDB", names) == "rocksdb"
    assert parse_name("com.example.MyStateBackendFactory", names) == "com.example.MyStateBackendFactory"
    with pytest.raises(FlinkValueError, match="hashmap, rocksdb"):
        parse_name("memory", names)


def test_restart_strategy_spellings_are_canonical() -> None:
    option = BY_KEY["restart-strategy.type"]
    assert option.parse("fixeddelay") == "fixed-delay"
    assert option.parse("off") == "none"
    assert option.parse("exponential-delay") == "exponential-delay"


def test_option_parse_refuses_empty_and_structured_values() -> None:
    interval = BY_KEY["execution.checkpointing.interval"]
    with pytest.raises(FlinkValueError, match="no value"):
        interval.parse(None)
    with pytest.raises(FlinkValueError, match="YAML dict"):
        interval.parse({"a": 1})
    assert BY_KEY["pipeline.global-job-parameters"].parse({"a": "b"}) == {"a": "b"}
    assert BY_KEY["execution.checkpointing.dir"].parse("s3://b/p") == "s3://b/p"


# --- the key table ------------------------------------------------------------------------------


def test_key_table_defaults_match_the_reference() -> None:
    defaults = {o.key: o.default for o in explicit_defaults()}
    assert defaults["execution.checkpointing.interval"] is None  # checkpointing off
    assert defaults["execution.checkpointing.mode"] == "exactly_once"
    assert defaults["execution.checkpointing.timeout"] == 600_000
    assert defaults["execution.checkpointing.min-pause"] == 0
    assert defaults["execution.checkpointing.max-concurrent-checkpoints"] == 1
    assert defaults["execution.checkpointing.externalized-checkpoint-retention"] == "no_externalized_checkpoints"
    assert defaults["execution.checkpointing.num-retained"] == 1
    assert defaults["execution.checkpointing.tolerable-failed-checkpoints"] == 0
    assert defaults["execution.checkpointing.unaligned.enabled"] is False
    assert defaults["execution.checkpointing.incremental"] is False
    assert defaults["state.backend.type"] == "hashmap"
    assert defaults["pipeline.max-parallelism"] == -1
    assert defaults["pipeline.auto-generate-uids"] is True
    assert defaults["execution.state-recovery.ignore-unclaimed-state"] is False
    assert defaults["execution.state-recovery.claim-mode"] == "no_claim"
    assert defaults["table.exec.state.ttl"] == 0


@pytest.mark.parametrize(
    ("alias", "key"),
    [
        ("state.checkpoints.num-retained", "execution.checkpointing.num-retained"),
        ("state.checkpoints.dir", "execution.checkpointing.dir"),
        ("state.backend.fs.checkpointdir", "execution.checkpointing.dir"),
        ("state.savepoints.dir", "execution.checkpointing.savepoint-dir"),
        ("savepoints.state.backend.fs.dir", "execution.checkpointing.savepoint-dir"),
        ("state.checkpoint-storage", "execution.checkpointing.storage"),
        ("state.backend", "state.backend.type"),
        ("state.backend.incremental", "execution.checkpointing.incremental"),
        ("execution.checkpointing.unaligned", "execution.checkpointing.unaligned.enabled"),
        ("execution.checkpointing.alignment-timeout", "execution.checkpointing.aligned-checkpoint-timeout"),
        ("restart-strategy", "restart-strategy.type"),
        ("execution.savepoint.path", "execution.state-recovery.path"),
        ("execution.savepoint.ignore-unclaimed-state", "execution.state-recovery.ignore-unclaimed-state"),
        ("execution.savepoint-restore-mode", "execution.state-recovery.claim-mode"),
        ("pipeline.operator-chaining", "pipeline.operator-chaining.enabled"),
        ("state.backend.changelog.enabled", "state.changelog.enabled"),
    ],
)
def test_deprecated_aliases_map_to_their_2x_names(alias: str, key: str) -> None:
    info = lookup(alias)
    assert info.status is KeyStatus.ALIAS
    assert info.canonical == key


def test_key_classes() -> None:
    assert lookup("execution.checkpointing.interval").status is KeyStatus.TYPED
    for open_key in (
        "kubernetes.operator.savepoint.history.max.count",
        "high-availability.storageDir",
        "table.exec.mini-batch.enabled",
        "state.backend.rocksdb.memory.managed",
        "rest.port",
        "metrics.reporter.prom.port",  # a reporter's own keys, under the name the user gives it
        "flink.hadoop.dfs.replication",
        "fs.s3a.connection.maximum",  # passed on to the file system's library
    ):
        assert lookup(open_key).status is KeyStatus.OPEN, open_key
    # below Flink's own namespaces, a key must be one of Flink's (these once passed as "open")
    for closed_key, expected in (
        ("execution.runtime-mode.x", "execution.runtime-mode"),
        ("execution.checkpoints.dir", "execution.checkpointing.dir"),
        ("sql-client.execution.runtime-mode", "execution.runtime-mode"),
    ):
        info = lookup(closed_key)
        assert (info.status, suggestion(closed_key)) == (KeyStatus.UNKNOWN, expected), closed_key
    typo = lookup("execution.checkpointing.intervall")
    assert typo.status is KeyStatus.UNKNOWN
    assert typo.status is KeyStatus.UNKNOWN and suggestion(typo.written) == "execution.checkpointing.interval"
    assert suggestion("state.checkpoint.dir") == "state.checkpoints.dir"
    assert suggestion("pipeline.auto-generated-uids") == "pipeline.auto-generate-uids"
    foreign = lookup("my.custom.setting")
    assert foreign.status is KeyStatus.UNKNOWN and suggestion("my.custom.setting") is None


def test_every_option_is_unique_and_aliases_do_not_collide() -> None:
    keys = [o.key for o in OPTIONS]
    aliases = [a for o in OPTIONS for a in o.aliases]
    assert len(keys) == len(set(keys))
    assert len(aliases) == len(set(aliases))
    assert not set(keys) & set(aliases)
    for option in OPTIONS:
        if option.type is ValueType.ENUM:
            assert option.choices and all(c == c.upper() for c in option.choices)
            assert option.default is None or option.default.upper() in option.choices


def test_map_keys_are_not_flattened() -> None:
    assert is_map_key("pipeline.global-job-parameters")
    assert not is_map_key("execution.checkpointing.unaligned")  # a prefix of unaligned.enabled


@pytest.mark.parametrize(
    ("p", "maxp"), [(1, 128), (4, 128), (85, 128), (86, 256), (100, 256), (1000, 2048), (30000, 32768)]
)
def test_auto_max_parallelism(p: int, maxp: int) -> None:
    assert auto_max_parallelism(p) == maxp


# --- SQL SET statements -------------------------------------------------------------------------


def _sets(text: str) -> list[tuple[str | None, str | None, int]]:
    settings, problems = parse_sql_settings(text)
    assert not problems, problems
    return [(s.key, s.value, s.line) for s in settings if not s.reset]


def test_sql_quoting_variants() -> None:
    text = (
        "SET 'a.b' = 'x';\n"
        'SET "c.d" = "y";\n'
        "SET `e.f` = `z`;\n"
        "SET g.h=plain;\n"
        "set 'i.j'='lower keyword';\n"
        "SET 'k.l' = 'it''s';\n"
        "SET 'm.n' = 'a;b';\n"
    )
    assert _sets(text) == [
        ("a.b", "x", 1),
        ("c.d", "y", 2),
        ("e.f", "z", 3),
        ("g.h", "plain", 4),
        ("i.j", "lower keyword", 5),
        ("k.l", "it's", 6),
        ("m.n", "a;b", 7),
    ]


def test_sql_comments_are_skipped() -> None:
    text = (
        "-- SET 'a' = '1';\n"
        "/* SET 'b' = '2';\n"
        "   SET 'c' = '3'; */\n"
        "SET 'd' = '4'; -- trailing\n"
        "SET /* inline */ 'e' = '5';\n"
    )
    assert _sets(text) == [("d", "4", 4), ("e", "5", 5)]


def test_sql_statement_over_several_lines_keeps_its_first_line() -> None:
    text = "\n\nSET 'a.b'\n   =\n   '60 s';\nSET 'c' = '1'"  # the last one has no semicolon
    assert _sets(text) == [("a.b", "60 s", 3), ("c", "1", 6)]


def test_sql_other_statements_are_ignored() -> None:
    text = (
        "CREATE TABLE t (s STRING) WITH ('connector' = 'datagen');\n"
        "INSERT INTO x SELECT ';' FROM t;\n"
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT * FROM b; END;\n"
        "BEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;\n"
        "SET;\n"
        "SET 'real' = 'yes';\n"
    )
    assert _sets(text) == [("real", "yes", 8)]


def test_sql_reset() -> None:
    settings, _ = parse_sql_settings("SET 'a' = '1';\nRESET 'a';\nreset;\n")
    assert [(s.key, s.reset, s.line) for s in settings] == [("a", False, 1), ("a", True, 2), (None, True, 3)]


def test_sql_unreadable_set_is_a_problem_with_its_line() -> None:
    settings, problems = parse_sql_settings("SET 'a' = '1';\n\nSET 'b' 'c';\nSET 'd' = 'e' 'f';\nRESET 'a' 'b';\n")
    assert [(s.key, s.value) for s in settings] == [("a", "1")]
    assert [p.line for p in problems] == [3, 4, 5]
    assert "SET 'key' = 'value'" in problems[0].message


def test_sql_unterminated_quote_does_not_hang_or_crash() -> None:
    settings, problems = parse_sql_settings("SET 'a' = 'never closed;\nSET 'b' = '2';\n")
    assert settings == [] or all(s.key in ("a", "b") for s in settings)
    assert isinstance(problems, list)
