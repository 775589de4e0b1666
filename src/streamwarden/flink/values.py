"""Parsers for Flink configuration values, as Flink itself reads them (no I/O).

- Durations follow ``org.apache.flink.util.TimeUtils.parseDuration``: an integer, optional
  whitespace, and a unit label (case-insensitive) among ``ns nano(s) nanosecond(s)``,
  ``µs us micro(s) microsecond(s)``, ``ms milli(s) millisecond(s)``, ``s sec(s) second(s)``,
  ``m min minute(s)``, ``h hour(s)``, ``d day(s)``. No unit means **milliseconds**. One number
  and one unit only: ``1h 30min`` is refused, as Flink refuses it. ISO-8601 (``PT1M``,
  ``P1DT2H``, ``PT0.5S``), which Flink 2.x accepts, is read too. Results are integer
  milliseconds (sub-millisecond parts are truncated, like ``Duration.toMillis``).
- Memory sizes follow ``org.apache.flink.configuration.MemorySize.parse``: an integer and a unit
  among ``b bytes``, ``k kb kibibytes``, ``m mb mebibytes``, ``g gb gibibytes``,
  ``t tb tebibytes`` (all binary, case-insensitive). No unit means bytes.
- Booleans: ``true``/``false`` in any case and nothing else (Flink refuses ``yes``/``on``/``1``).
- Enums: Flink matches the Java constant name case-insensitively (``exactly_once`` works,
  ``exactly-once`` does not); the normalized value is the lower-case constant.

Every parser raises :class:`FlinkValueError` with a message a user can act on.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from decimal import Decimal

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)


class FlinkValueError(ValueError):
    """A configuration value Flink would refuse."""


_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3_600 * 10**9,
    "d": 86_400 * 10**9,
}

DURATION_LABELS: dict[str, str] = {
    "d": "d",
    "day": "d",
    "days": "d",
    "h": "h",
    "hour": "h",
    "hours": "h",
    "m": "m",
    "min": "m",
    "minute": "m",
    "minutes": "m",
    "s": "s",
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "ms": "ms",
    "milli": "ms",
    "millis": "ms",
    "millisecond": "ms",
    "milliseconds": "ms",
    "µs": "us",
    "us": "us",
    "micro": "us",
    "micros": "us",
    "microsecond": "us",
    "microseconds": "us",
    "ns": "ns",
    "nano": "ns",
    "nanos": "ns",
    "nanosecond": "ns",
    "nanoseconds": "ns",
}

MEMORY_LABELS: dict[str, int] = {
    "b": 1,
    "bytes": 1,
    "k": 1024,
    "kb": 1024,
    "kibibytes": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mebibytes": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gibibytes": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
    "tebibytes": 1024**4,
}

# Kubernetes quantities the Flink operator also accepts for spec.jobManager/taskManager memory.
_K8S_MEMORY: dict[str, int] = {
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
    "Pi": 1024**5,
    "K": 1000,
    "M": 1000**2,
    "G": 1000**3,
    "T": 1000**4,
    "P": 1000**5,
}

_ISO = re.compile(
    r"^(?P<sign>[-+]?)P(?:(?P<d>[-+]?\d+)D)?"
    r"(?P<t>T(?:(?P<h>[-+]?\d+)H)?(?:(?P<m>[-+]?\d+)M)?(?:(?P<s>[-+]?\d+)(?:[.,](?P<f>\d{0,9}))?S)?)?$",
    re.IGNORECASE | re.ASCII,
)
# durations and memory sizes: ASCII digits only (TimeUtils and MemorySize scan for '0'..'9'; Python's
# \d also takes other scripts' digits, "١٠s"); an int is Java's Integer.parseInt's, which takes them
_LEADING_DIGITS = re.compile(r"^(\d*)(.*)$", re.DOTALL | re.ASCII)
_INT = re.compile(r"^[+-]?\d+$")

_DURATION_HELP = "write a number and a unit, e.g. 500 ms, 60 s, 1 min, 2 h, 1 d (no unit = ms) or ISO-8601 PT1M"
_MEMORY_HELP = "write a number and a unit among b, k/kb, m/mb, g/gb, t/tb, e.g. 256 mb, 1g (no unit = bytes)"


def _split_number(text: str, what: str, help_text: str) -> tuple[int, str]:
    trimmed = text.strip()
    if not trimmed:
        raise FlinkValueError(f"an empty value is not a {what}; {help_text}")
    match = _LEADING_DIGITS.match(trimmed)
    assert match is not None  # the pattern matches every string
    number, rest = match.group(1), match.group(2).strip()
    if not number:
        raise FlinkValueError(f"{text!r} is not a {what}: it does not start with a number; {help_text}")
    value = int(number)
    if value > LONG_MAX:
        raise FlinkValueError(f"{text!r} is not a {what}: {number} does not fit in 64 bits")
    return value, rest


def parse_duration_ms(text: str) -> int:
    """A Flink duration as integer milliseconds: ``"1 min"`` -> 60000, ``"60000"`` -> 60000."""
    if not isinstance(text, str):
        raise FlinkValueError(f"{text!r} is not a duration; {_DURATION_HELP}")
    trimmed = text.strip()
    if trimmed[:1] in ("P", "p") or (trimmed[:1] in ("-", "+") and trimmed[1:2] in ("P", "p")):
        return _parse_iso_duration_ms(trimmed, text)
    value, label = _split_number(text, "duration", _DURATION_HELP)
    if not label:
        return value
    unit = DURATION_LABELS.get(label.lower())
    if unit is None:
        raise FlinkValueError(
            f"{text!r} is not a duration: unit {label!r} is not one Flink knows; {_DURATION_HELP}"
            " (one number and one unit: Flink refuses combinations like '1h 30min')"
        )
    nanos = value * _NS[unit]
    if nanos // 1_000_000 > LONG_MAX:
        raise FlinkValueError(f"{text!r} is too long a duration for Flink (it overflows 64-bit milliseconds)")
    return nanos // 1_000_000


def _parse_iso_duration_ms(trimmed: str, text: str) -> int:
    match = _ISO.match(trimmed)
    groups = match.groupdict() if match else {}
    has_part = any(groups.get(k) is not None for k in ("d", "h", "m", "s"))
    if not match or not has_part or (groups["t"] is not None and groups["t"].upper() == "T"):
        raise FlinkValueError(f"{text!r} is not a duration; {_DURATION_HELP}")
    total = Decimal(0)
    for key, factor in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if groups[key] is not None:
            total += Decimal(int(groups[key])) * factor
    if groups["f"]:
        sign = -1 if groups["s"] and groups["s"].startswith("-") else 1
        total += sign * Decimal(f"0.{groups['f']}") * 1000
    if groups["sign"] == "-":
        total = -total
    if total < 0:
        raise FlinkValueError(f"{text!r} is a negative duration; Flink needs a positive one")
    return int(total)


def parse_memory_bytes(text: str, *, kubernetes: bool = False) -> int:
    """A Flink memory size in bytes: ``"256 mb"`` -> 268435456, ``"1g"`` -> 1073741824.

    With ``kubernetes=True`` (the operator's ``spec.jobManager.resource.memory``), a Kubernetes
    quantity such as ``2Gi`` is accepted when the text is not a Flink memory size.
    """
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise FlinkValueError(f"{text!r} is not a memory size; {_MEMORY_HELP}")
    text = str(text)
    try:
        value, label = _split_number(text, "memory size", _MEMORY_HELP)
    except FlinkValueError:
        if kubernetes:
            return _parse_k8s_quantity(text)
        raise
    if not label:
        return value
    factor = MEMORY_LABELS.get(label.lower())
    if factor is None:
        if kubernetes:
            return _parse_k8s_quantity(text)
        raise FlinkValueError(f"{text!r} is not a memory size: unit {label!r} is unknown; {_MEMORY_HELP}")
    result = value * factor
    if result > LONG_MAX:
        raise FlinkValueError(f"{text!r} is too large a memory size for Flink (it overflows 64 bits)")
    return result


def _parse_k8s_quantity(text: str) -> int:
    match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([KMGTP]i?)?\s*$", text, re.ASCII)
    if not match:
        raise FlinkValueError(f"{text!r} is not a memory size; {_MEMORY_HELP} or a Kubernetes quantity (2Gi)")
    number = Decimal(match.group(1))
    return int(number * _K8S_MEMORY.get(match.group(2) or "", 1))


def parse_bool(text: str | bool) -> bool:
    """``true``/``false`` in any case; Flink refuses everything else."""
    if isinstance(text, bool):
        return text
    lowered = str(text).strip().lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise FlinkValueError(f"{text!r} is not a boolean: Flink accepts only true or false")


def parse_int(text: str | int, *, minimum: int | None = None, maximum: int = INT_MAX) -> int:
    """A Java ``int`` (``Integer.parseInt``), optionally bounded below."""
    if isinstance(text, bool):
        raise FlinkValueError(f"{text!r} is not an integer")
    raw = str(text).strip()
    if not _INT.match(raw):
        raise FlinkValueError(f"{text!r} is not an integer")
    value = int(raw)
    if value > maximum or value < INT_MIN:
        raise FlinkValueError(f"{text!r} does not fit in a 32-bit integer (Flink refuses it)")
    if minimum is not None and value < minimum:
        raise FlinkValueError(f"{text!r} is below the smallest value Flink accepts here ({minimum})")
    return value


def parse_enum(text: str, constants: Iterable[str]) -> str:
    """A Java enum constant, matched case-insensitively; returns it lower-case."""
    names = list(constants)
    raw = str(text).strip()
    upper = raw.upper()
    if upper in names:
        return upper.lower()
    expected = ", ".join(names)
    if upper.replace("-", "_").replace(" ", "_") in names:
        right = upper.replace("-", "_").replace(" ", "_")
        raise FlinkValueError(
            f"{text!r} is not accepted by Flink, which matches the constant name exactly: write {right}"
        )
    raise FlinkValueError(f"{text!r} is not one of {expected}")


def parse_name(text: str, names: Mapping[str, str], *, allow_class: bool = True) -> str:
    """A short name Flink maps to an implementation (``rocksdb``), or a factory class name."""
    raw = str(text).strip()
    canonical = names.get(raw.lower())
    if canonical is not None:
        return canonical
    if allow_class and "." in raw and " " not in raw:
        return raw  # a fully qualified factory class: kept verbatim
    expected = ", ".join(sorted(set(names.values())))
    raise FlinkValueError(f"{text!r} is not one of {expected} (or a factory class name)")


def bare_location(location: str) -> str:
    """A checkpoint or savepoint location without ``user:password@`` and without a query string
    (a signed URL's, or ``?endpoint_override=host&scheme=http``, which pyarrow reads as the endpoint
    it signs requests to): what is shown, and what a server-named location is read as. A plain path
    (or a Windows drive letter) is itself. Raises ValueError for a URL that does not parse."""
    parts = urllib.parse.urlsplit(location)
    if not parts.scheme or len(parts.scheme) == 1:
        return location
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
