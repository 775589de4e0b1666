"""Reporters: one module per output format, each reading only the run's findings."""

from __future__ import annotations

from streamwarden.report.interface import Report, Reporter

FORMATS = ("text", "json")


def get_reporter(name: str) -> Reporter:
    if name == "text":
        from streamwarden.report.text import TextReporter

        return TextReporter()
    if name == "json":
        from streamwarden.report.json_format import JsonReporter

        return JsonReporter()
    from streamwarden.errors import UsageError

    raise UsageError(f"unknown format '{name}'", hint="use one of: " + ", ".join(FORMATS))


__all__ = ["FORMATS", "Report", "Reporter", "get_reporter"]
