"""``--format text``: grouped by pipeline, most severe first, colour only on a terminal (``--color``,
``NO_COLOR``: :func:`use_color`); unusable input is counted in the summary and listed on stderr.

Every value from a contract, a file name or a server goes through ``escape.terminal`` (one line,
controls shown escaped, workflow commands broken) before it is coloured; ``escape.log_text``
checks the whole text once more, keeping only our own colour sequences."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO

import click

from streamwarden.core.escape import log_text
from streamwarden.core.escape import terminal as t
from streamwarden.evaluate.findings import SEVERITY_ORDER, tally
from streamwarden.report.interface import Report, Reporter

_COLORS = {"error": "red", "warning": "yellow", "info": "blue", "waived": "bright_black"}


class TextReporter(Reporter):
    def render(self, report: Report, *, color: bool = False) -> str:
        def style(text: str, fg: str | None = None, bold: bool = False) -> str:
            return click.style(text, fg=fg, bold=bold) if color else text

        out: list[str] = []
        for pipeline, findings in report.by_pipeline().items():
            where = t(report.pipeline_files.get(pipeline, ""))
            out.append(style(t(pipeline), bold=True) + (f"  ({where})" if where else ""))
            active = sorted(
                (f for f in findings if f.counts),
                key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.file or "", f.line or 0, f.rule),
            )
            waived = [f for f in findings if f.waived]
            counted = tally(findings)
            n_waived, n_baselined = counted["waived"], counted["baselined"]
            if not active:
                quiet = [f"{n_waived} waived"] if n_waived else []
                quiet += [f"{n_baselined} baselined"] if n_baselined else []
                out.append(
                    "  " + style("ok", fg="green") + ": no findings" + (f" ({', '.join(quiet)})" if quiet else "")
                )
            elif n_baselined:
                out.append(f"  ({n_baselined} baselined finding{'s' if n_baselined != 1 else ''} not shown)")
            for f in active:
                label = style(f"{f.severity:<7}", fg=_COLORS.get(f.severity))
                loc = t(f"{f.file}:{f.line}" if f.line else (f.file or ""))
                out.append(f"  {label} {style(t(f.rule), bold=True)}  {loc}  {t(f.path)}".rstrip())
                out.append(f"          {t(f.message)}")
                if f.remediation:
                    out.append(f"          fix: {t(_first_line(f.remediation))}")
            for f in waived:
                w = f.waiver or {}
                label = style("waived ", fg=_COLORS["waived"])
                if f.more is not None:  # the waived findings of its rule in its file not listed
                    out.append(f"  {label} {t(f.rule)}  {t(f.file)}:{f.line}  {t(f.message)}")
                    continue
                detail = f"reason: {t(w.get('reason'))}; expires {t(w.get('expires'))}"
                if w.get("approved_by"):
                    detail += f"; approved by {t(w.get('approved_by'))}"
                out.append(f"  {label} {t(f.rule)}  {t(f.file)}:{f.line}  {t(f.message)}")
                out.append(f"          {detail}")
            out.append("")
        s = report.summary
        line = (
            f"{s['pipelines']} pipeline{'s' if s['pipelines'] != 1 else ''}: {s['passed']} passed, "
            f"{s['errors']} error{'s' if s['errors'] != 1 else ''}, "
            f"{s['warnings']} warning{'s' if s['warnings'] != 1 else ''}, {s['waived']} waived"
        )
        if s.get("baselined"):
            line += f", {s['baselined']} baselined"
        if report.errors:  # each error itself is on stderr (cli.check), as validate prints them
            n = len({e.file or f"#{i}" for i, e in enumerate(report.errors)})
            line += f"; {n} unusable file{'s' if n != 1 else ''}"
        out.append(style(line, bold=True))
        return log_text("\n".join(out) + "\n", colours=color)


def use_color(choice: str, stream: IO[str], environ: Mapping[str, str] | None = None) -> bool:
    """``--color always|never`` decide; ``auto``: colour on a terminal unless ``NO_COLOR`` is set
    to a non-empty value (https://no-color.org)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _first_line(text: str) -> str:
    """The remediation's first paragraph on one line (METADATA wraps it over several)."""
    paragraph = text.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())
