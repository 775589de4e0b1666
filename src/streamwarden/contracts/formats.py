"""The JSON Schema ``format`` values the contract schema asserts: ``date`` and ``date-time``.

The schema's patterns accept the shape (``YYYY-MM-DD``, day 01-31 in any month); these checks
add the calendar: 2026-02-31, 2027-02-29 and year 0000 are no dates (Python's ``date`` refuses
them), so a waiver cannot expire on a day that never comes. A timestamp's date part is checked
the same way; its time and offset stay the pattern's (leap seconds ``:60`` included).
Both validators use these checks: jsonschema (through :func:`format_checker`) and the compiled
fast path (``fastcheck.compile_schema(..., formats=FORMATS)``), so they always agree.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from streamwarden.core.dates import calendar_problem


def is_calendar_date(value: object) -> bool:
    """The ``date`` / ``date-time`` check: strings whose date part is a real day (others pass:
    ``format`` applies to strings only)."""
    return not isinstance(value, str) or calendar_problem(value) is None


FORMATS: dict[str, Callable[[object], bool]] = {"date": is_calendar_date, "date-time": is_calendar_date}


@functools.cache
def format_checker() -> Any:
    """jsonschema's checker of these formats (jsonschema is imported only when messages are
    written: a run whose contracts are all valid, or all cache hits, never loads it)."""
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for name, check in FORMATS.items():
        checker.checks(name)(check)
    return checker
