"""``--format text``: grouped by pipeline, most severe first, colour only on a terminal."""

from __future__ import annotations

import click

from streamwarden.findings import SEVERITY_ORDER, Finding
from streamwarden.report.interface import Report, Reporter

_COLORS = {"error": "red", "warning": "yellow", "info": "blue", "waived": "bright_black"}


class TextReporter(Reporter):
    def render(self, report: Report, *, color: bool = False) -> str:
        def style(text: str, fg: str | None = None, bold: bool = False) -> str:
            return click.style(text, fg=fg, bold=bold) if color else text

        out: list[str] = []
        by_pipeline: dict[str, list[Finding]] = {p: [] for p in report.pipelines}
        for f in report.findings:
            by_pipeline.setdefault(f.pipeline, []).append(f)
        for pipeline, findings in by_pipeline.items():
            where = report.pipeline_files.get(pipeline, "")
            out.append(style(pipeline, bold=True) + (f"  ({where})" if where else ""))
            active = sorted(
                (f for f in findings if f.counts),
                key=lambda f: (SEVERITY_ORDER.get(f.severity, 9), f.file or "", f.line or 0, f.rule),
            )
            waived = [f for f in findings if f.waived]
            baselined = [f for f in findings if f.baselined and not f.waived]
            if not active:
                quiet = [f"{len(waived)} waived"] if waived else []
                quiet += [f"{len(baselined)} baselined"] if baselined else []
                out.append(
                    "  " + style("ok", fg="green") + ": no findings" + (f" ({', '.join(quiet)})" if quiet else "")
                )
            elif baselined:
                out.append(f"  ({len(baselined)} baselined finding{'s' if len(baselined) != 1 else ''} not shown)")
            for f in active:
                label = style(f"{f.severity:<7}", fg=_COLORS.get(f.severity))
                loc = f"{f.file}:{f.line}" if f.line else (f.file or "")
                out.append(f"  {label} {style(f.rule, bold=True)}  {loc}  {f.path}".rstrip())
                out.append(f"          {f.message}")
                if f.remediation:
                    out.append(f"          fix: {_first_line(f.remediation)}")
            for f in waived:
                w = f.waiver or {}
                label = style("waived ", fg=_COLORS["waived"])
                detail = f"reason: {w.get('reason')}; expires {w.get('expires')}"
                if w.get("approved_by"):
                    detail += f"; approved by {w.get('approved_by')}"
                out.append(f"  {label} {f.rule}  {f.file}:{f.line}  {f.message}")
                out.append(f"          {detail}")
            out.append("")
        for e in report.errors:
            out.append(style("unusable input", fg="red", bold=True) + ": " + e.render())
        if report.errors:
            out.append("")
        s = report.summary
        line = (
            f"{s['pipelines']} pipeline{'s' if s['pipelines'] != 1 else ''}: {s['passed']} passed, "
            f"{s['errors']} error{'s' if s['errors'] != 1 else ''}, "
            f"{s['warnings']} warning{'s' if s['warnings'] != 1 else ''}, {s['waived']} waived"
        )
        if s.get("baselined"):
            line += f", {s['baselined']} baselined"
        if report.errors:
            line += f"; {len(report.errors)} unusable input{'s' if len(report.errors) != 1 else ''}"
        out.append(style(line, bold=True))
        return "\n".join(out) + "\n"


def _first_line(text: str) -> str:
    """The remediation's first paragraph on one line (METADATA wraps it over several)."""
    paragraph = text.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())
