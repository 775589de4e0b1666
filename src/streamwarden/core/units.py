"""Contract units: durations (``90s``) to milliseconds, sizes (``50GiB``) to bytes."""

from __future__ import annotations

import re

DURATION_UNITS_MS = {"ms": 1, "s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
SIZE_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}

MAX_VALUE = 2**63 - 1  # a Java long: Flink holds durations (ms) and sizes (bytes) in one
_DURATION_RE = re.compile(r"(\d+)(ms|s|m|h|d)")
_SIZE_RE = re.compile(r"(\d+)(B|KiB|MiB|GiB|TiB)")


def parse_duration(text: str) -> int:
    """``"90s"`` -> 90000. Raises ValueError with a message a user can act on."""
    m = _DURATION_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(
            f"{text!r} is not a duration: write an integer and a unit among ms s m h d (e.g. 500ms, 90s, 10m, 24h, 7d)"
        )
    return _bounded(text, m.group(1), DURATION_UNITS_MS[m.group(2)], "ms")


def parse_size(text: str) -> int:
    """``"50GiB"`` -> bytes. Raises ValueError with a message a user can act on."""
    m = _SIZE_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(
            f"{text!r} is not a size: write an integer and a unit among B KiB MiB GiB TiB (e.g. 512MiB, 50GiB)"
        )
    return _bounded(text, m.group(1), SIZE_UNITS[m.group(2)], "bytes")


def _bounded(text: str, digits: str, factor: int, unit: str) -> int:
    # the digit count first: int() of a 5,000-digit string is itself an error
    value = int(digits) * factor if len(digits) <= 20 else MAX_VALUE + 1
    if value > MAX_VALUE:
        shown = text if len(text) <= 40 else f"{text[:12]}...{text[-8:]} ({len(digits)} digits)"
        raise ValueError(f"{shown!r} is too large: at most {MAX_VALUE} {unit}, what Flink (a 64-bit integer) can hold")
    return value


def format_duration(ms: int) -> str:
    """The largest unit that divides evenly: 90000 -> ``90s``, 600000 -> ``10m``, 0 -> ``0s``."""
    if ms == 0:
        return "0s"
    for unit in ("d", "h", "m", "s"):
        factor = DURATION_UNITS_MS[unit]
        if ms and ms % factor == 0:
            return f"{ms // factor}{unit}"
    return f"{ms}ms"


def format_size(n: int) -> str:
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        factor = SIZE_UNITS[unit]
        if n and n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}B"


# what people write for a unit, lower-cased, -> the contract's unit
_DURATION_WORDS = {
    **dict.fromkeys(("ms", "msec", "msecs", "milli", "millis", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), "m"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "h"),
    **dict.fromkeys(("d", "day", "days"), "d"),
}
_SIZE_WORDS = {
    **dict.fromkeys(("b", "byte", "bytes"), "B"),
    **dict.fromkeys(("k", "kb", "kib"), "KiB"),
    **dict.fromkeys(("m", "mb", "mib"), "MiB"),
    **dict.fromkeys(("g", "gb", "gib"), "GiB"),
    **dict.fromkeys(("t", "tb", "tib"), "TiB"),
}
_WRITTEN = re.compile(r"\s*(\d+)\s*([A-Za-z]+)\s*")


def suggest_duration(text: str) -> str | None:
    """``10min`` -> ``10m``, ``30sec`` -> ``30s``, ``2hours`` -> ``2h``, ``5 m`` -> ``5m``; None
    when the text is no near miss of a duration."""
    m = _WRITTEN.fullmatch(text) if isinstance(text, str) else None
    unit = _DURATION_WORDS.get(m.group(2).lower()) if m else None
    if m is None or unit is None:
        return None
    guess = f"{m.group(1)}{unit}"
    return guess if guess != text else None


def suggest_size(text: str) -> tuple[str, bool] | None:
    """``512MB`` -> (``512MiB``, True): the guess, and whether the text used a decimal-looking
    unit (the contract's sizes are binary: 1MiB = 1,048,576 bytes); None when no near miss."""
    m = _WRITTEN.fullmatch(text) if isinstance(text, str) else None
    word = m.group(2).lower() if m else ""
    unit = _SIZE_WORDS.get(word)
    if m is None or unit is None:
        return None
    guess = f"{m.group(1)}{unit}"
    if guess == text:
        return None
    return guess, word != "b" and "i" not in word
