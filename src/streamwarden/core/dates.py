"""Calendar dates as contracts write them (``YYYY-MM-DD``, alone or at the start of an RFC 3339
timestamp): is the day real? Used by the YAML loader and the contract schema's ``date`` /
``date-time`` formats, so 2026-02-31 or year 0000 never becomes a waiver that cannot expire."""

from __future__ import annotations

import re

_DATE_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def calendar_problem(text: str) -> str | None:
    """Why the ``YYYY-MM-DD`` at the start of ``text`` is no calendar date (None: it is one, or
    ``text`` does not start with that shape, which is the pattern's to report)."""
    m = _DATE_RE.match(text)
    if m is None:
        return None
    year, month, day = (int(g) for g in m.groups())
    if year < 1:
        return "year 0000 does not exist (years start at 0001)"
    if not 1 <= month <= 12:
        return f"there is no month {month:02d}"
    import calendar  # only a date that matches the pattern pays for the module (and its locale import)

    last = calendar.monthrange(year, month)[1]
    if not 1 <= day <= last:
        return f"{calendar.month_name[month]} {year} has {last} days"
    return None
