"""What streamwarden knows about Flink: configuration keys, defaults and value syntax."""

from streamwarden.flink.config import (
    BY_KEY,
    OPTIONS,
    FlinkOption,
    KeyInfo,
    KeyStatus,
    ValueType,
    auto_max_parallelism,
    explicit_defaults,
    lookup,
)
from streamwarden.flink.values import (
    FlinkValueError,
    parse_bool,
    parse_duration_ms,
    parse_enum,
    parse_int,
    parse_memory_bytes,
)

__all__ = [
    "BY_KEY",
    "OPTIONS",
    "FlinkOption",
    "FlinkValueError",
    "KeyInfo",
    "KeyStatus",
    "ValueType",
    "auto_max_parallelism",
    "explicit_defaults",
    "lookup",
    "parse_bool",
    "parse_duration_ms",
    "parse_enum",
    "parse_int",
    "parse_memory_bytes",
]
