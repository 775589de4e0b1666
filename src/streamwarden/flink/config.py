"""What streamwarden knows about Flink configuration keys (no I/O).

The key table gives each option its Flink 2.x name, its deprecated 1.x aliases in the order
Flink falls back to them, its type and its default (docs/facts-deployment.md). Options
marked ``explicit_default`` are the ones the policies read: when the repository leaves them
unset, the deployment facts carry Flink's default explicitly.

Key classes:
- a key in the table (or one of its aliases) is **typed**: its value is parsed and normalized;
- a key in one of the key sets of ``keys/*.txt`` is **known** (``KeyStatus.OPEN``) but not typed;
- any other key is **unknown**: Flink ignores it silently, which is usually a typo, and the
  closest known key is its suggestion.

The key sets are data, each file saying where it comes from: ``flink.txt`` is every
configuration key of Flink 1.15 to 2.3 with its deprecated names, generated from Flink's option
classes by scripts/update_flink_keys.py; the others are the keys of Flink components that read
their own options from the same configuration (the Kubernetes Operator, the autoscaler, Stateful
Functions, Iceberg's Flink connector), and the namespaces whose key names the user or another
library chooses: a metric reporter's ``metrics.reporter.<name>.*``, ``flink.hadoop.*``, the file
systems' pass-through prefixes (``s3.*``, ``fs.s3a.*``, ``gs.*``, ...), a map option's entries.
Every other namespace is closed: ``execution.checkpoints.dir`` is unknown, with
``execution.checkpointing.dir`` as its suggestion. A repository adds its own keys with
``flink: {known_keys: [...]}`` in streamwarden.yaml (:func:`matches_known`).
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from streamwarden.flink.values import (
    INT_MAX,
    FlinkValueError,
    parse_bool,
    parse_duration_ms,
    parse_enum,
    parse_int,
    parse_memory_bytes,
    parse_name,
)


class ValueType(str, Enum):
    DURATION = "duration"
    MEMORY = "memory"
    BOOL = "bool"
    INT = "int"
    ENUM = "enum"  # a Java enum: constants in `choices`
    NAME = "name"  # a short name Flink maps to an implementation, or a class name
    STRING = "string"
    MAP = "map"  # a structured value: nested YAML below it is not flattened


@dataclass(frozen=True)
class FlinkOption:
    key: str
    type: ValueType
    default: Any = None
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()  # ENUM: Java constants; NAME: accepted short names
    names: tuple[tuple[str, str], ...] = ()  # NAME: extra spellings -> canonical short name
    minimum: int | None = None
    explicit_default: bool = False  # made explicit in the facts when the repository leaves it unset

    def parse(self, raw: Any) -> Any:
        """Normalize one value as written; raises FlinkValueError when Flink would refuse it."""
        if raw is None or (isinstance(raw, str) and not raw.strip() and self.type is not ValueType.STRING):
            raise FlinkValueError("the key has no value; Flink refuses an empty value for it")
        if self.type is ValueType.MAP or self.type is ValueType.STRING:
            return raw
        if isinstance(raw, (dict, list)):
            raise FlinkValueError(f"a {self.type.value} is expected here, not a YAML {type(raw).__name__}")
        text = raw if isinstance(raw, str) else str(raw)
        if self.type is ValueType.DURATION:
            ms = parse_duration_ms(text)
            if self.minimum is not None and ms < self.minimum:
                raise FlinkValueError(f"{text!r} is below the smallest value Flink accepts here ({self.minimum} ms)")
            return ms
        if self.type is ValueType.MEMORY:
            return parse_memory_bytes(text)
        if self.type is ValueType.BOOL:
            return parse_bool(text)
        if self.type is ValueType.INT:
            return parse_int(text, minimum=self.minimum)
        if self.type is ValueType.ENUM:
            return parse_enum(text, self.choices)
        names = {c: c for c in self.choices}
        names.update(dict(self.names))
        return parse_name(text, names)


_DUR, _MEM, _BOOL, _INT, _ENUM, _NAME, _STR = (
    ValueType.DURATION,
    ValueType.MEMORY,
    ValueType.BOOL,
    ValueType.INT,
    ValueType.ENUM,
    ValueType.NAME,
    ValueType.STRING,
)
CKPT = "execution.checkpointing."

OPTIONS: tuple[FlinkOption, ...] = (
    # --- checkpointing (the policies read these) ---
    # CheckpointConfig refuses an interval below 10 ms (MINIMAL_CHECKPOINT_TIME): the job does not start
    FlinkOption(CKPT + "interval", _DUR, None, minimum=10, explicit_default=True),
    FlinkOption(CKPT + "mode", _ENUM, "exactly_once", choices=("EXACTLY_ONCE", "AT_LEAST_ONCE"), explicit_default=True),
    FlinkOption(CKPT + "timeout", _DUR, 600_000, explicit_default=True),
    FlinkOption(CKPT + "min-pause", _DUR, 0, explicit_default=True),
    FlinkOption(CKPT + "max-concurrent-checkpoints", _INT, 1, minimum=1, explicit_default=True),
    FlinkOption(
        CKPT + "externalized-checkpoint-retention",
        _ENUM,
        "no_externalized_checkpoints",
        choices=("RETAIN_ON_CANCELLATION", "DELETE_ON_CANCELLATION", "NO_EXTERNALIZED_CHECKPOINTS"),
        explicit_default=True,
    ),
    FlinkOption(
        CKPT + "num-retained", _INT, 1, aliases=("state.checkpoints.num-retained",), minimum=1, explicit_default=True
    ),
    FlinkOption(
        CKPT + "dir",
        _STR,
        None,
        aliases=("state.checkpoints.dir", "state.backend.fs.checkpointdir"),
        explicit_default=True,
    ),
    FlinkOption(
        CKPT + "savepoint-dir",
        _STR,
        None,
        aliases=("state.savepoints.dir", "savepoints.state.backend.fs.dir"),
        explicit_default=True,
    ),
    FlinkOption(
        CKPT + "storage",
        _NAME,
        None,
        aliases=("state.checkpoint-storage",),
        choices=("jobmanager", "filesystem"),
        explicit_default=True,
    ),
    FlinkOption(CKPT + "incremental", _BOOL, False, aliases=("state.backend.incremental",), explicit_default=True),
    FlinkOption(CKPT + "unaligned.enabled", _BOOL, False, aliases=(CKPT + "unaligned",), explicit_default=True),
    FlinkOption(CKPT + "tolerable-failed-checkpoints", _INT, 0, minimum=0, explicit_default=True),
    FlinkOption(CKPT + "aligned-checkpoint-timeout", _DUR, 0, aliases=(CKPT + "alignment-timeout",)),
    FlinkOption(CKPT + "unaligned.forced", _BOOL, False),
    FlinkOption(CKPT + "unaligned.max-subtasks-per-channel-state-file", _INT, 5, minimum=1),
    FlinkOption(CKPT + "unaligned.interruptible-timers.enabled", _BOOL, False),
    FlinkOption(CKPT + "interval-during-backlog", _DUR, None),
    FlinkOption(
        CKPT + "checkpoints-after-tasks-finish", _BOOL, True, aliases=(CKPT + "checkpoints-after-tasks-finish.enabled",)
    ),
    FlinkOption(CKPT + "cleaner.parallel-mode", _BOOL, True, aliases=("state.checkpoint.cleaner.parallel-mode",)),
    FlinkOption(CKPT + "create-subdir", _BOOL, True, aliases=("state.checkpoints.create-subdir",)),
    FlinkOption(CKPT + "during-recovery.enabled", _BOOL, False),
    FlinkOption(CKPT + "unaligned.recover-output-on-downstream.enabled", _BOOL, False),
    FlinkOption(CKPT + "local-backup.enabled", _BOOL, False),
    FlinkOption(CKPT + "local-backup.dirs", _STR, None, aliases=("taskmanager.state.local.root-dirs",)),
    FlinkOption(
        CKPT + "write-buffer-size",
        _INT,  # an Integer option in Flink: "4 kb" is refused
        4096,
        aliases=("state.storage.fs.write-buffer-size", "state.backend.fs.write-buffer-size"),
    ),
    FlinkOption(
        CKPT + "data-inline-threshold",
        _MEM,
        20480,
        aliases=("state.storage.fs.memory-threshold", "state.backend.fs.memory-threshold"),
    ),
    FlinkOption(CKPT + "file-merging.enabled", _BOOL, False),
    FlinkOption(CKPT + "file-merging.across-checkpoint-boundary", _BOOL, False),
    FlinkOption(CKPT + "file-merging.max-file-size", _MEM, 32 * 1024**2),
    FlinkOption(CKPT + "file-merging.pool-blocking", _BOOL, False),
    FlinkOption(CKPT + "file-merging.max-space-amplification", _STR, "2.0"),
    FlinkOption(CKPT + "snapshot-compression", _BOOL, False),
    FlinkOption(CKPT + "recover-without-channel-state.checkpoint-id", _STR, "-1"),
    # --- state backend ---
    FlinkOption(
        "state.backend.type",
        _NAME,
        "hashmap",
        aliases=("state.backend",),
        choices=("hashmap", "rocksdb", "forst"),
        names=(("filesystem", "filesystem"), ("jobmanager", "jobmanager")),
        explicit_default=True,
    ),
    FlinkOption("state.changelog.enabled", _BOOL, False, aliases=("state.backend.changelog.enabled",)),
    FlinkOption(
        "state.changelog.periodic-materialize.enabled",
        _BOOL,
        True,
        aliases=("state.backend.changelog.periodic-materialize.enabled",),
    ),
    FlinkOption(
        "state.changelog.periodic-materialize.interval",
        _DUR,
        600_000,
        aliases=("state.backend.changelog.periodic-materialize.interval",),
    ),
    FlinkOption(
        "state.changelog.max-failures-allowed", _INT, 3, aliases=("state.backend.changelog.max-failures-allowed",)
    ),
    FlinkOption("state.changelog.storage", _STR, "memory", aliases=("state.backend.changelog.storage",)),
    # --- restore ---
    FlinkOption(
        "execution.state-recovery.path", _STR, None, aliases=("execution.savepoint.path",), explicit_default=True
    ),
    FlinkOption(
        "execution.state-recovery.ignore-unclaimed-state",
        _BOOL,
        False,
        aliases=("execution.savepoint.ignore-unclaimed-state",),
        explicit_default=True,
    ),
    FlinkOption(
        "execution.state-recovery.claim-mode",
        _ENUM,
        "no_claim",
        aliases=("execution.savepoint-restore-mode",),
        choices=("CLAIM", "NO_CLAIM", "LEGACY"),
        explicit_default=True,
    ),
    FlinkOption("execution.state-recovery.from-local", _BOOL, False, aliases=("state.backend.local-recovery",)),
    FlinkOption(
        "execution.state-recovery.approximate-local-recovery",
        _BOOL,
        False,
        aliases=("execution.checkpointing.approximate-local-recovery",),
    ),
    FlinkOption("execution.state-recovery.without-channel-state.checkpoint-id", _STR, "-1"),
    # --- pipeline ---
    FlinkOption("pipeline.max-parallelism", _INT, -1, minimum=-1, explicit_default=True),
    FlinkOption("pipeline.auto-generate-uids", _BOOL, True, explicit_default=True),
    FlinkOption("pipeline.operator-chaining.enabled", _BOOL, True, aliases=("pipeline.operator-chaining",)),
    FlinkOption("pipeline.operator-chaining.chain-operators-with-different-max-parallelism", _BOOL, True),
    FlinkOption("pipeline.name", _STR),
    FlinkOption("pipeline.jars", _STR),
    FlinkOption("pipeline.classpaths", _STR),
    FlinkOption("pipeline.auto-watermark-interval", _DUR, 200),
    FlinkOption("pipeline.closure-cleaner-level", _ENUM, "recursive", choices=("NONE", "TOP_LEVEL", "RECURSIVE")),
    FlinkOption("pipeline.object-reuse", _BOOL, False),
    FlinkOption("pipeline.force-avro", _BOOL, False),
    FlinkOption("pipeline.force-kryo", _BOOL, False),
    FlinkOption("pipeline.force-kryo-avro", _BOOL, False),
    FlinkOption("pipeline.generic-types", _BOOL, True),
    FlinkOption("pipeline.auto-type-registration", _BOOL, True),
    FlinkOption("pipeline.global-job-parameters", ValueType.MAP),
    FlinkOption("pipeline.serialization-config", ValueType.MAP),
    FlinkOption("pipeline.default-kryo-serializers", _STR),
    FlinkOption("pipeline.registered-kryo-types", _STR),
    FlinkOption("pipeline.registered-pojo-types", _STR),
    FlinkOption("pipeline.cached-files", _STR),
    FlinkOption("pipeline.vertex-description-mode", _ENUM, "tree", choices=("TREE", "CASCADING")),
    FlinkOption("pipeline.vertex-name-include-index-prefix", _BOOL, False),
    FlinkOption("pipeline.jobvertex-parallelism-overrides", ValueType.MAP),
    FlinkOption("pipeline.watermark-alignment.allow-unaligned-source-splits", _BOOL, False),
    FlinkOption("pipeline.time-characteristic", _STR),
    # --- restart strategy ---
    FlinkOption(
        "restart-strategy.type",
        _NAME,
        None,
        aliases=("restart-strategy",),
        choices=("none", "fixed-delay", "failure-rate", "exponential-delay"),
        names=(
            ("off", "none"),
            ("disable", "none"),
            ("fixeddelay", "fixed-delay"),
            ("failurerate", "failure-rate"),
            ("exponentialdelay", "exponential-delay"),
        ),
        explicit_default=True,
    ),
    FlinkOption("restart-strategy.fixed-delay.attempts", _INT, 1, minimum=0),
    FlinkOption("restart-strategy.fixed-delay.delay", _DUR, 1_000),
    FlinkOption("restart-strategy.failure-rate.max-failures-per-interval", _INT, 1, minimum=1),
    FlinkOption("restart-strategy.failure-rate.failure-rate-interval", _DUR, 60_000),
    FlinkOption("restart-strategy.failure-rate.delay", _DUR, 1_000),
    FlinkOption("restart-strategy.exponential-delay.initial-backoff", _DUR, 1_000),
    FlinkOption("restart-strategy.exponential-delay.max-backoff", _DUR, 60_000),
    FlinkOption("restart-strategy.exponential-delay.backoff-multiplier", _STR, "1.5"),
    FlinkOption("restart-strategy.exponential-delay.reset-backoff-threshold", _DUR, 3_600_000),
    FlinkOption("restart-strategy.exponential-delay.jitter-factor", _STR, "0.1"),
    FlinkOption("restart-strategy.exponential-delay.attempts-before-reset-backoff", _INT, INT_MAX),
    # --- SQL and resources the rules or the CR mapping read ---
    FlinkOption("table.exec.state.ttl", _DUR, 0, explicit_default=True),
    FlinkOption("parallelism.default", _INT, 1, minimum=1),
    FlinkOption("jobmanager.memory.process.size", _MEM),
    FlinkOption("taskmanager.memory.process.size", _MEM),
    FlinkOption("jobmanager.memory.flink.size", _MEM),
    FlinkOption("taskmanager.memory.flink.size", _MEM),
    FlinkOption("taskmanager.memory.managed.size", _MEM),
    FlinkOption("taskmanager.numberOfTaskSlots", _INT, 1, minimum=1),
    FlinkOption("execution.runtime-mode", _ENUM, "streaming", choices=("STREAMING", "BATCH", "AUTOMATIC")),
    FlinkOption("execution.buffer-timeout.enabled", _BOOL, True),
    FlinkOption("execution.buffer-timeout.interval", _DUR, 100, aliases=("execution.buffer-timeout",)),
    FlinkOption("execution.target", _STR),
    FlinkOption("execution.attached", _BOOL, False),
    FlinkOption("execution.shutdown-on-attached-exit", _BOOL, False),
    FlinkOption("execution.job-listeners", _STR),
    FlinkOption("execution.batch-shuffle-mode", _STR),
)

BY_KEY: dict[str, FlinkOption] = {o.key: o for o in OPTIONS}
ALIAS_OF: dict[str, FlinkOption] = {a: o for o in OPTIONS for a in o.aliases}


class KeyStatus(str, Enum):
    TYPED = "typed"  # the 2.x key of a table entry
    ALIAS = "alias"  # a deprecated alias of a table entry
    OPEN = "open"  # a key of Flink or of a component that streamwarden knows but does not type
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class KeyInfo:
    written: str
    canonical: str  # the 2.x key for TYPED/ALIAS, the key as written otherwise
    status: KeyStatus
    option: FlinkOption | None = None


KEYS_DIR = Path(__file__).parent / "keys"


@dataclass(frozen=True)
class KnownKeys:
    """The key sets of ``keys/*.txt``: exact keys, and patterns (``prefix.*``, ``<name>``)."""

    exact: frozenset[str]
    patterns: tuple[re.Pattern[str], ...]

    def knows(self, key: str) -> bool:
        return key in self.exact or (self.any_pattern is not None and self.any_pattern.fullmatch(key) is not None)

    @functools.cached_property
    def any_pattern(self) -> re.Pattern[str] | None:
        """The patterns as one alternation: one match per key (a file may set 100,000 keys)."""
        if not self.patterns:
            return None
        return re.compile("|".join(f"(?:{p.pattern})" for p in self.patterns))


def _pattern(entry: str) -> re.Pattern[str]:
    """``prefix.*``: any key below the prefix; ``<name>``: one segment."""
    out = ""
    for i, part in enumerate(entry.split(".")):
        sep = r"\." if i else ""
        if part == "*":
            out += sep + r".+"
        elif part.startswith("<") and part.endswith(">"):
            out += sep + r"[^.]+"
        else:
            out += sep + re.escape(part)
    return re.compile(out)


@functools.cache
def known_keys() -> KnownKeys:
    """Every key set of ``keys/``. A line is a key or a pattern; after ``#``, a note (in flink.txt
    the releases that have the key, and ``map`` for a map option, whose entries are keys below it)."""
    exact: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    for file in sorted(KEYS_DIR.glob("*.txt")):
        for line in file.read_text(encoding="utf-8").splitlines():
            entry, _, note = line.partition("#")
            entry = entry.strip()
            if not entry:
                continue
            if "*" in entry or "<" in entry:
                patterns.append(_pattern(entry))
            else:
                exact.add(entry)
            if note.split()[-1:] == ["map"]:
                patterns.append(_pattern(entry + ".*"))
    exact.update(BY_KEY)
    exact.update(ALIAS_OF)
    return KnownKeys(frozenset(exact), tuple(patterns))


@functools.cache
def _by_first_segment() -> dict[str, tuple[str, ...]]:
    groups: dict[str, list[str]] = {}
    for key in sorted(known_keys().exact):
        groups.setdefault(key.split(".", 1)[0], []).append(key)
    return {k: tuple(v) for k, v in groups.items()}


def matches_known(key: str, known: tuple[str, ...]) -> bool:
    """Whether a repository's ``flink.known_keys`` entries (exact keys or globs: ``acme.*``) know ``key``."""
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in known)


@functools.lru_cache(maxsize=4096)
def lookup(key: str) -> KeyInfo:
    """Classify a key as written in a deployment file. An unknown key's did-you-mean is
    :func:`suggestion`'s (it compares the key with every known one: asked for where it is shown)."""
    if key in BY_KEY:
        return KeyInfo(key, key, KeyStatus.TYPED, BY_KEY[key])
    if key in ALIAS_OF:
        option = ALIAS_OF[key]
        return KeyInfo(key, option.key, KeyStatus.ALIAS, option)
    if known_keys().knows(key):
        return KeyInfo(key, key, KeyStatus.OPEN)
    return KeyInfo(key, key, KeyStatus.UNKNOWN)


def suggestion(key: str) -> str | None:
    """The did-you-mean of an unknown key (:func:`suggest`)."""
    return suggest(key)


@functools.lru_cache(maxsize=1024)
def suggest(key: str) -> str | None:
    """The closest known key, for a did-you-mean: a known key the unknown one ends with
    (``sql-client.execution.runtime-mode`` -> ``execution.runtime-mode``: a namespace put in
    front), else the closest spelling among the keys of its first segment, else among all keys."""
    exact = known_keys().exact
    parts = key.split(".")
    for i in range(1, len(parts) - 1):
        suffix = ".".join(parts[i:])
        if suffix in exact:
            return suffix
    same = _by_first_segment().get(parts[0], ())
    for candidates in (same, tuple(sorted(exact))):
        matches = difflib.get_close_matches(key, candidates, n=1, cutoff=0.75)
        if matches:
            return matches[0]
    return None


def is_map_key(key: str) -> bool:
    """A structured option: nested YAML below it is its value, not more keys."""
    option = BY_KEY.get(key) or ALIAS_OF.get(key)
    return option is not None and option.type is ValueType.MAP


def explicit_defaults() -> tuple[FlinkOption, ...]:
    return tuple(o for o in OPTIONS if o.explicit_default)


def auto_max_parallelism(parallelism: int) -> int:
    """Flink's max parallelism when ``pipeline.max-parallelism`` is -1 (KeyGroupRangeAssignment)."""
    wanted = parallelism + parallelism // 2
    power = 1
    while power < wanted:
        power *= 2
    return min(max(power, 128), 32768)
