"""Everything a user reads is rendered here, every value escaped for its destination by
streamwarden.core.escape (one function per format):

- ``check``'s reporters, one module per output format behind ``Reporter.render(Report)``, each
  reading only the run's findings: text, json_format, sarif, junit, github, markdown;
- the other verbs' documents, rendered from the data the verb built (never deciding again):
  gate.py (the gate decision: text, JSON, Markdown), evidence.py (the recovery evidence record:
  JSON, Markdown), review.py (``diff``'s contract review: JSON, Markdown), savepoint.py
  (``savepoint inspect``: text, JSON), catalog.py (``policy doc``), timeline.py (the checkpoint ↔
  snapshot timeline, a Mermaid block in the Markdown of gate and evidence).
"""

from __future__ import annotations

import importlib

from streamwarden.report.interface import Report, Reporter

FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")
# the file name extension each format is usually written with (used in help and docs)
EXTENSIONS = {"text": "txt", "json": "json", "sarif": "sarif", "junit": "xml", "github": "txt", "markdown": "md"}


# format -> (module in report/, reporter class); each module is imported only when chosen
_REPORTERS = {
    "text": ("text", "TextReporter"),
    "json": ("json_format", "JsonReporter"),
    "sarif": ("sarif", "SarifReporter"),
    "junit": ("junit", "JunitReporter"),
    "github": ("github", "GithubReporter"),
    "markdown": ("markdown", "MarkdownReporter"),
}


def get_reporter(name: str) -> Reporter:
    """The reporter by format name."""
    if name not in _REPORTERS:
        from streamwarden.core.errors import UsageError

        raise UsageError(f"unknown format '{name}'", hint="use one of: " + ", ".join(FORMATS))
    module, cls = _REPORTERS[name]
    reporter: Reporter = getattr(importlib.import_module(f"streamwarden.report.{module}"), cls)()
    return reporter


__all__ = ["EXTENSIONS", "FORMATS", "Report", "Reporter", "get_reporter"]
