"""``--format github``: GitHub Actions workflow commands, one annotation per finding that counts.

``::error file=F,line=N,title=T::message`` for errors (``warning`` for warnings, ``notice`` for info)
on the repository-relative file and line of the offending field. Waived and baselined findings are
not annotated. Unusable inputs are ``::error`` annotations too. The Markdown job summary (the same
text as ``--format markdown``) is appended to ``$GITHUB_STEP_SUMMARY`` when that variable is set;
the CLI calls :func:`write_step_summary`.

Values are escaped the way the Actions runner unescapes them (``escape.annotation_data`` and
``annotation_property``), so a contract value can never end the annotation or start a workflow
command of its own; other control characters are shown escaped and ``##[`` is broken.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from streamwarden.core.escape import annotation_data as escape_data
from streamwarden.core.escape import annotation_property as escape_property
from streamwarden.report.interface import Report, Reporter
from streamwarden.report.markdown import SUMMARY_MAX_CHARS, MarkdownReporter

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
# where a job summary too large to show whole sends the reader
SUMMARY_FULL_REPORT = "the JSON and SARIF reports (`--format json`, `--report sarif=FILE`)"


__all__ = ["GithubReporter", "command", "escape_data", "escape_property", "write_step_summary"]


def command(name: str, message: str, **props: object) -> str:
    shown = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v not in (None, ""))
    return f"::{name}{' ' + shown if shown else ''}::{escape_data(message)}"


class GithubReporter(Reporter):
    def render(self, report: Report, *, color: bool = False) -> str:
        out: list[str] = []
        for f in report.findings:
            if not f.counts:
                continue
            title = f.rule if not f.title or f.title == f.rule else f"{f.rule}: {f.title}"
            message = f.message + (f" [{f.path}]" if f.path else "")
            out.append(
                command(
                    _COMMANDS.get(f.severity, "warning"),
                    message,
                    file=report.repo_path(f.file),
                    line=f.line,
                    title=title,
                )
            )
        for e in report.errors:
            out.append(
                command(
                    "error",
                    e.message + (f" (hint: {e.hint})" if e.hint else ""),
                    file=report.repo_path(e.file),
                    line=e.line,
                    title="streamwarden: unusable input",
                )
            )
        s = report.summary
        out.append(
            f"streamwarden: {_plural(s['pipelines'], 'pipeline')}, {s['passed']} passed, "
            f"{_plural(s['errors'], 'error')}, {_plural(s['warnings'], 'warning')}, {s['waived']} waived"
            + (f", {s.get('baselined', 0)} baselined" if report.baseline is not None else "")
            + (f", {_plural(len(report.errors), 'unusable input')}" if report.errors else "")
        )
        return "\n".join(out) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def write_step_summary(report: Report, environ: Mapping[str, str] | None = None) -> str | None:
    """Append the Markdown summary to ``$GITHUB_STEP_SUMMARY``; returns the file written, or None."""
    target = (environ if environ is not None else os.environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    with Path(target).open("a", encoding="utf-8") as fh:
        fh.write(MarkdownReporter(SUMMARY_MAX_CHARS, full_report=SUMMARY_FULL_REPORT).render(report))
        fh.write("\n")
    return target
