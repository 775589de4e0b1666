"""``--format markdown``: a pull-request comment (and the GitHub job summary).

Per pipeline, findings by severity; waived findings with their reason, expiry and approver;
baselined findings collapsed; the contract review (``report.diff``, the ``pipelines`` list of
``diff --format json``) when present. Contract values reach this text from a pull request, so every
cell is escaped (no HTML, no links, no @-mentions). The whole comment stays under GitHub's
65,536-character limit: rows that do not fit are counted, not shown.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from streamwarden import __version__
from streamwarden.findings import Finding, exit_code
from streamwarden.report.interface import Report, Reporter

MARKER = "<!-- streamwarden -->"
MAX_CHARS = 60_000  # GitHub rejects comments over 65,536 characters
_SECTIONS = (("error", "Errors"), ("warning", "Warnings"), ("info", "Info"))
_CLASS_ORDER = {"breaking": 0, "coordinate": 1, "safe": 2}
_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|])")


def cell(text: object) -> str:
    """Free text for a table cell: one line, HTML-escaped, markdown specials and @-mentions defused."""
    s = " ".join(str(text).split())
    s = html.escape(s, quote=False)
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return s.replace("@", "@\u200b")


def code(text: object) -> str:
    """An inline code span that survives backticks and table pipes in the value."""
    s = " ".join(str(text).split()).replace("|", "\\|")
    if not s:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or longest else ""
    return f"{fence}{pad}{s}{pad}{fence}"


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.dropped = 0

    def take(self, text: str) -> bool:
        if len(text) + 1 > self.left:
            self.dropped += 1
            return False
        self.left -= len(text) + 1
        return True


class MarkdownReporter(Reporter):
    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.max_chars = max_chars

    def render(self, report: Report, *, color: bool = False) -> str:
        head = _header(report)
        foot = _footer(report)
        budget = _Budget(self.max_chars - len("\n".join(head + foot)) - 400)
        body: list[str] = []
        for pipeline, findings in _by_pipeline(report).items():
            body += _pipeline_section(report, pipeline, findings, budget)
        if report.errors:
            body += _errors_section(report, budget)
        if report.diff is not None:
            body += _diff_section(report.diff, budget)
        if budget.dropped:
            body += [
                f"> {budget.dropped} more row{'s' if budget.dropped != 1 else ''} did not fit in this comment: "
                "the SARIF and JSON reports have every finding.",
                "",
            ]
        return "\n".join(head + body + foot).rstrip() + "\n"


def _by_pipeline(report: Report) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {p: [] for p in report.pipelines}
    for f in report.findings:
        out.setdefault(f.pipeline, []).append(f)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _status(findings: list[Finding], fail_on: str) -> tuple[str, str]:
    if exit_code(findings, fail_on):
        return "❌", "fails"
    if any(f.counts and f.severity in ("error", "warning") for f in findings):
        return "⚠️", "passes with findings"
    return "✅", "passes"


def _header(report: Report) -> list[str]:
    s = report.summary
    failed = exit_code(report.findings, report.fail_on, len(report.errors)) != 0
    counts = [_plural(s["errors"], "error"), _plural(s["warnings"], "warning")]
    if report.errors:
        counts.append(_plural(len(report.errors), "unusable input"))
    title = f"## {'❌' if failed else '✅'} streamwarden: " + ", ".join(counts)
    detail = [
        f"{_plural(s['pipelines'], 'pipeline')} checked",
        f"{s['passed']} passed",
        _plural(s["errors"], "error"),
        _plural(s["warnings"], "warning"),
    ]
    if s.get("infos"):
        detail.append(f"{s['infos']} info")
    detail.append(f"{s['waived']} waived")
    if report.baseline is not None:
        detail.append(f"{s.get('baselined', 0)} baselined")
    out = [MARKER, title, "", " · ".join(detail) + f" (fails on: {report.fail_on})", ""]
    rows = _by_pipeline(report)
    if rows:
        out += ["| pipeline | result | errors | warnings | info | waived |", "|---|---|---:|---:|---:|---:|"]
        for pipeline, findings in rows.items():
            icon, word = _status(findings, report.fail_on)
            n = {sev: sum(1 for f in findings if f.counts and f.severity == sev) for sev, _ in _SECTIONS}
            waived = sum(1 for f in findings if f.waived)
            out.append(f"| {cell(pipeline)} | {icon} {word} | {n['error']} | {n['warning']} | {n['info']} | {waived} |")
        out.append("")
    return out


def _where(report: Report, f: Finding, contract: str | None) -> str:
    path = code(f.path) if f.path else ""
    if f.file and f.file == contract:
        loc = f"line {f.line}" if f.line else ""
    else:
        loc = code(f"{report.repo_path(f.file) or ''}{':' + str(f.line) if f.line else ''}")
    return "<br>".join(x for x in (loc, path) if x)


def _rule_cell(f: Finding) -> str:
    return code(f.rule) + (f"<br>{cell(f.title)}" if f.title and f.title != f.rule else "")


def _pipeline_section(report: Report, pipeline: str, findings: list[Finding], budget: _Budget) -> list[str]:
    icon, _ = _status(findings, report.fail_on)
    contract = report.pipeline_files.get(pipeline)
    out = [f"### {icon} {cell(pipeline)}"]
    if contract:
        out.append(code(report.repo_path(contract)))
    out.append("")
    active = [f for f in findings if f.counts]
    if not findings:
        out += ["No findings.", ""]
    for severity, label in _SECTIONS:
        rows = [f for f in active if f.severity == severity]
        if not rows:
            continue
        out += [f"**{label} ({len(rows)})**", "", "| rule | where | finding |", "|---|---|---|"]
        for f in rows:
            row = f"| {_rule_cell(f)} | {_where(report, f, contract)} | {cell(f.message)} |"
            if budget.take(row):
                out.append(row)
        out.append("")
    waived = [f for f in findings if f.waived]
    if waived:
        out += [
            f"**Waived ({len(waived)})**",
            "",
            "| rule | where | finding | reason | expires | approved by |",
            "|---|---|---|---|---|---|",
        ]
        for f in waived:
            w = f.waiver or {}
            reason, expires, approver = (cell(w.get(k) or "—") for k in ("reason", "expires", "approved_by"))
            row = (
                f"| {code(f.rule)} | {_where(report, f, contract)} | {cell(f.message)} "
                f"| {reason} | {expires} | {approver} |"
            )
            if budget.take(row):
                out.append(row)
        out.append("")
    baselined = [f for f in findings if f.baselined and not f.waived]
    if baselined:
        out += [
            "<details><summary>"
            + f"Baselined ({len(baselined)}): existing findings accepted by the baseline, not failing this run"
            + "</summary>",
            "",
            "| rule | severity | where | finding |",
            "|---|---|---|---|",
        ]
        for f in baselined:
            row = f"| {code(f.rule)} | {f.severity} | {_where(report, f, contract)} | {cell(f.message)} |"
            if budget.take(row):
                out.append(row)
        out += ["", "</details>", ""]
    return out


def _errors_section(report: Report, budget: _Budget) -> list[str]:
    out = [f"### ❌ Unusable inputs ({len(report.errors)})", "", "| where | problem |", "|---|---|"]
    for e in report.errors:
        where = report.repo_path(e.file) or ""
        if e.line:
            where += f":{e.line}"
        if e.path:
            where += f" {e.path}"
        problem = e.message + (f" (hint: {e.hint})" if e.hint else "")
        row = f"| {code(where) if where else '—'} | {cell(problem)} |"
        if budget.take(row):
            out.append(row)
    return [*out, ""]


def _value(v: Any) -> str:
    if v is None:
        return "—"
    text = json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)
    return code(text if len(text) <= 80 else text[:77] + "...")


def _diff_section(diff: list[dict[str, Any]], budget: _Budget) -> list[str]:
    out = ["### Contract changes", ""]
    if not diff:
        return [*out, "No contract changed.", ""]
    for p in diff:
        changes = sorted(
            p.get("changes") or [], key=lambda c: (_CLASS_ORDER.get(str(c.get("class")), 9), str(c.get("path")))
        )
        classes = [str(c.get("class")) for c in changes]
        counts = ", ".join(f"{classes.count(k)} {k}" for k in _CLASS_ORDER if k in classes)
        icon = "🛑" if "breaking" in classes else "⚠️" if "coordinate" in classes else "✅"
        out += [
            f"#### {icon} {cell(p.get('pipeline', '?'))}: {cell(p.get('status', 'changed'))}"
            + (f" ({counts})" if counts else ""),
            "",
        ]
        if not changes:
            note = cell(p.get("note") or "")  # e.g. "No change in meaning: ..."
            if note and budget.take(note):
                out += [note, ""]
            continue
        out += ["| class | field | change | before | after | why | consumers |", "|---|---|---|---|---|---|---|"]
        for c in changes:
            why = str(c.get("reason") or "")
            if c.get("rule"):
                why = f"{c['rule']}: {why}" if why else str(c["rule"])
            consumers = c.get("consumers") or []
            row = (
                f"| **{cell(c.get('class', '?'))}** | {code(c.get('path', ''))} | {cell(c.get('change', ''))} "
                f"| {_value(c.get('before'))} | {_value(c.get('after'))} | {cell(why) or '—'} "
                f"| {cell(', '.join(str(x) for x in consumers)) or '—'} |"
            )
            if budget.take(row):
                out.append(row)
        out.append("")
    return out


def _footer(report: Report) -> list[str]:
    parts = [f"streamwarden {__version__}", f"fails on {report.fail_on}"]
    if report.baseline is not None:
        parts.append(f"baseline {report.baseline}")
    return ["<sub>" + cell(" · ".join(parts)) + "</sub>"]
