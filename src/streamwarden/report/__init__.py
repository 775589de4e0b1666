"""Everything a user reads is rendered here, every value escaped for its destination by
streamwarden.core.escape (one function per format):

- ``check``'s reporters, one module per output format behind ``Reporter.render(Report)``, each
  reading only the run's findings: text, json_format, sarif, junit, github, markdown;
- the other verbs' documents, rendered from the data the verb built (never deciding again):
  gate.py (the gate decision: text, JSON, Markdown), evidence.py (the recovery evidence record:
  JSON, Markdown), review.py (``diff``'s contract review: JSON, Markdown), savepoint.py
  (``savepoint inspect``: text, JSON), catalog.py (``policy doc``), timeline.py (the checkpoint ↔
  snapshot timeline, a Mermaid block in the Markdown of gate and evidence), notices.py (the
  consumer notices of an evidence record: Markdown, JSON).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamwarden.report.interface import Report, Reporter

# The one list of check's formats: format -> (module in report/, reporter class, the file name
# extension it is usually written with). The CLI's choices, the help and the tests read it; each
# module is imported only when chosen, and this package imports nothing at start, so the CLI
# reads the list without loading a renderer.
_REPORTERS = {
    "text": ("text", "TextReporter", "txt"),
    "json": ("json_format", "JsonReporter", "json"),
    "sarif": ("sarif", "SarifReporter", "sarif"),
    "junit": ("junit", "JunitReporter", "xml"),
    "github": ("github", "GithubReporter", "txt"),
    "markdown": ("markdown", "MarkdownReporter", "md"),
}
FORMATS = tuple(_REPORTERS)
EXTENSIONS = {name: extension for name, (_, _, extension) in _REPORTERS.items()}


def get_reporter(name: str) -> Reporter:
    """The reporter by format name."""
    if name not in _REPORTERS:
        from streamwarden.core.errors import UsageError

        raise UsageError(f"unknown format '{name}'", hint="use one of: " + ", ".join(FORMATS))
    module, cls, _ = _REPORTERS[name]
    reporter: Reporter = getattr(importlib.import_module(f"streamwarden.report.{module}"), cls)()
    return reporter


def __getattr__(name: str) -> Any:  # Report and Reporter, imported on first use
    if name in ("Report", "Reporter"):
        from streamwarden.report import interface

        return getattr(interface, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EXTENSIONS", "FORMATS", "Report", "Reporter", "get_reporter"]
