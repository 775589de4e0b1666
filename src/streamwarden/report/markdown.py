"""``--format markdown``: a pull-request comment (and the GitHub job summary).

Per pipeline, findings by severity; waived findings with their reason, expiry and approver;
baselined findings collapsed; the contract review (``report.diff``, the ``pipelines`` list of
``diff --format json``) when present, its tables those of ``diff --format markdown``
(``review.change_rows``). Contract values reach this text from a pull request, so every
one goes through ``escape.cell`` or ``escape.code`` (no HTML, no links, no @-mentions, no workflow
command). The whole comment, headers and footer included, stays within GitHub's 65,536-character
limit: when it would not, it is cut after the last row that fits, and a notice says how much is
missing and where the full report is.
"""

from __future__ import annotations

from typing import Any

from streamwarden import __version__
from streamwarden.core.escape import cell, code
from streamwarden.evaluate.findings import Finding, exit_code, tally
from streamwarden.evaluate.review import CLASS_ORDER
from streamwarden.report.interface import Report, Reporter
from streamwarden.report.review import CHANGE_HEADING, change_rows

MARKER = "<!-- streamwarden -->"
MAX_CHARS = 65_536  # GitHub refuses a comment longer than this
SUMMARY_MAX_CHARS = 250_000  # a job summary may hold 1 MiB (bytes: an emoji is 4)
COMMENT_FULL_REPORT = (
    "the job summary of the workflow run and its `streamwarden-*` artifact (`findings.json`, "
    "`streamwarden.sarif`); locally, `streamwarden check --format json`"
)
_SECTIONS = (("error", "Errors"), ("warning", "Warnings"), ("info", "Info"))

__all__ = ["MARKER", "MAX_CHARS", "SUMMARY_MAX_CHARS", "MarkdownReporter", "cell", "code"]


class _Budget:
    """Characters left for the text (a line costs its length plus its newline). Once something
    does not fit, nothing more is taken: the text is a prefix of the whole, then the notice."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit
        self.full = False
        self.rows = 0  # rows (findings, unusable inputs, contract changes) offered
        self.rows_cut = 0
        self.pipelines = 0  # rows of the overview table offered
        self.pipelines_cut = 0

    def take(self, lines: list[str]) -> bool:
        if self.left is None:
            return True
        cost = sum(len(line) + 1 for line in lines)
        if self.full or cost > self.left:
            self.full = True
            return False
        self.left -= cost
        return True

    @property
    def cut(self) -> bool:
        return bool(self.rows_cut or self.pipelines_cut)

    def table(self, heading: list[str], rows: list[str], tail: list[str]) -> list[str]:
        """``heading`` (with at least the first row) and ``tail`` (reserved with it), rows while they fit."""
        self.rows += len(rows)
        if not self.take(heading + rows[:1] + tail):
            self.rows_cut += len(rows)
            return []
        out = heading + rows[:1]
        for i, row in enumerate(rows[1:], start=1):
            if not self.take([row]):
                self.rows_cut += len(rows) - i
                break
            out.append(row)
        return out + tail


def _notice(rows: int, rows_cut: int, pipelines: int, pipelines_cut: int, limit: int, full_report: str) -> str:
    missing = []
    if rows_cut:
        missing.append(f"{rows_cut:,} of {rows:,} rows (findings, unusable inputs, contract changes)")
    if pipelines_cut:
        missing.append(f"{pipelines_cut:,} of {pipelines:,} pipelines of the overview")
    return (
        f"> ✂️ **Cut to fit in {limit:,} characters:** {' and '.join(missing)} "
        f"{'are' if rows_cut + pipelines_cut != 1 else 'is'} not shown. Every finding is in {full_report}."
    )


class MarkdownReporter(Reporter):
    def __init__(self, max_chars: int = MAX_CHARS, *, full_report: str = COMMENT_FULL_REPORT) -> None:
        self.max_chars = max_chars
        self.full_report = full_report

    def render(self, report: Report, *, color: bool = False) -> str:
        whole = self._render(report, None)
        return whole if len(whole) <= self.max_chars else self._render(report, self.max_chars)

    def _render(self, report: Report, limit: int | None) -> str:
        foot = _footer(report)
        budget = _Budget(None)
        if limit is not None:
            # the footer and the longest notice this report could need are held back
            n = len(report.findings) + len(report.errors) + sum(len(p.get("changes") or []) for p in report.diff or [])
            worst = _notice(n, n, len(report.pipelines), len(report.pipelines), limit, self.full_report)
            budget = _Budget(limit - sum(len(line) + 1 for line in [*foot, worst, ""]))
        head = _header(report, budget)
        body: list[str] = []
        for pipeline, findings in report.by_pipeline().items():
            body += _pipeline_section(report, pipeline, findings, budget)
        if report.errors:
            body += _errors_section(report, budget)
        if report.diff is not None:
            body += _diff_section(report.diff, budget)
        if budget.cut and limit is not None:
            body += [
                _notice(budget.rows, budget.rows_cut, budget.pipelines, budget.pipelines_cut, limit, self.full_report),
                "",
            ]
        return "\n".join(head + body + foot).rstrip() + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _status(findings: list[Finding], fail_on: str) -> tuple[str, str]:
    if exit_code(findings, fail_on):
        return "❌", "fails"
    if any(f.counts and f.severity in ("error", "warning") for f in findings):
        return "⚠️", "passes with findings"
    return "✅", "passes"


def _header(report: Report, budget: _Budget) -> list[str]:
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
    budget.take(out)
    rows = report.by_pipeline()
    if rows:
        table = []
        for pipeline, findings in rows.items():
            icon, word = _status(findings, report.fail_on)
            n = tally(findings)
            table.append(
                f"| {cell(pipeline)} | {icon} {word} | {n['errors']} | {n['warnings']} | {n['infos']} | {n['waived']} |"
            )
        heading = ["| pipeline | result | errors | warnings | info | waived |", "|---|---|---:|---:|---:|---:|"]
        # the overview may use a third of what is left: the findings come next
        overview = _Budget(None if budget.left is None else budget.left // 3)
        shown = overview.table(heading, table, [""])
        budget.pipelines, budget.pipelines_cut = overview.rows, overview.rows_cut
        if budget.take(shown):
            out += shown
        else:
            budget.pipelines_cut = len(table)
    return out


def _where(report: Report, f: Finding, contract: str | None) -> str:
    path = code(f.path) if f.path else ""
    if f.file and f.file == contract:
        loc = f"line {f.line}" if f.line else ""
    else:
        loc = code(f"{report.repo_path(f.file) or ''}{':' + str(f.line) if f.line else ''}")
    return "<br>".join(x for x in (loc, path) if x)


def _count(findings: list[Finding], severity: str) -> int:
    """The findings of ``severity`` these rows stand for (a row may count the ones not listed)."""
    return sum(f.more[f"{severity}s"] if f.more is not None else 1 for f in findings)


def _rule_cell(f: Finding) -> str:
    return code(f.rule) + (f"<br>{cell(f.title)}" if f.title and f.title != f.rule else "")


def _pipeline_section(report: Report, pipeline: str, findings: list[Finding], budget: _Budget) -> list[str]:
    icon, _ = _status(findings, report.fail_on)
    contract = report.pipeline_files.get(pipeline)
    # the heading goes out with the first table (and its first row), or not at all
    heading = [f"### {icon} {cell(pipeline)}"]
    if contract:
        heading.append(code(report.repo_path(contract)))
    heading.append("")
    out: list[str] = []
    active = [f for f in findings if f.counts]
    if not findings:
        block = [*heading, "No findings.", ""]
        return block if budget.take(block) else []
    tables: list[tuple[list[str], list[str], list[str]]] = []
    for severity, label in _SECTIONS:
        listed = [f for f in active if f.severity == severity]
        rows = [f"| {_rule_cell(f)} | {_where(report, f, contract)} | {cell(f.message)} |" for f in listed]
        if rows:
            n = _count(listed, severity)
            tables.append(([f"**{label} ({n})**", "", "| rule | where | finding |", "|---|---|---|"], rows, [""]))
    waived = [f for f in findings if f.waived]
    if waived:
        rows = []
        for f in waived:
            w = f.waiver or {}
            reason, expires, approver = (cell(w.get(k) or "—") for k in ("reason", "expires", "approved_by"))
            rows.append(
                f"| {code(f.rule)} | {_where(report, f, contract)} | {cell(f.message)} "
                f"| {reason} | {expires} | {approver} |"
            )
        tables.append(
            (
                [
                    f"**Waived ({tally(waived)['waived']})**",
                    "",
                    "| rule | where | finding | reason | expires | approved by |",
                    "|---|---|---|---|---|---|",
                ],
                rows,
                [""],
            )
        )
    baselined = [f for f in findings if f.baselined and not f.waived]
    if baselined:
        rows = [
            f"| {code(f.rule)} | {cell(f.severity)} | {_where(report, f, contract)} | {cell(f.message)} |"
            for f in baselined
        ]
        tables.append(
            (
                [
                    "<details><summary>"
                    + f"Baselined ({tally(baselined)['baselined']}): existing findings accepted by the baseline, "
                    + "not failing this run"
                    + "</summary>",
                    "",
                    "| rule | severity | where | finding |",
                    "|---|---|---|---|",
                ],
                rows,
                ["", "</details>", ""],
            )
        )
    if not tables:
        return heading if budget.take(heading) else []
    for table_heading, rows, tail in tables:
        out += budget.table(heading + table_heading if not out else table_heading, rows, tail)
    return out


def _errors_section(report: Report, budget: _Budget) -> list[str]:
    rows = []
    for e in report.errors:
        where = report.repo_path(e.file) or ""
        if e.line:
            where += f":{e.line}"
        if e.path:
            where += f" {e.path}"
        problem = e.message + (f" (hint: {e.hint})" if e.hint else "")
        rows.append(f"| {code(where) if where else '—'} | {cell(problem)} |")
    heading = [f"### ❌ Unusable inputs ({len(report.errors)})", "", "| where | problem |", "|---|---|"]
    return budget.table(heading, rows, [""])


def _diff_section(diff: list[dict[str, Any]], budget: _Budget) -> list[str]:
    heading = ["### Contract changes", ""]
    if not diff:
        return [*heading, "No contract changed.", ""] if budget.take([*heading, "No contract changed.", ""]) else []
    out: list[str] = []
    for p in diff:
        changes = p.get("changes") or []
        classes = [str(c.get("class")) for c in changes]
        counts = ", ".join(f"{classes.count(k)} {k}" for k in CLASS_ORDER if k in classes)
        icon = "🛑" if "breaking" in classes else "⚠️" if "coordinate" in classes else "✅"
        title = [
            f"#### {icon} {cell(p.get('pipeline', '?'))}: {cell(p.get('status', 'changed'))}"
            + (f" ({counts})" if counts else ""),
            "",
        ]
        lead = heading + title if not out else title
        if not changes:
            note = cell(p.get("note") or "")  # e.g. "No change in meaning: ..."
            block = lead + ([note, ""] if note else [])
            if budget.take(block):
                out += block
            continue
        out += budget.table(lead + CHANGE_HEADING, change_rows(changes), [""])
    return out


def _footer(report: Report) -> list[str]:
    parts = [f"streamwarden {__version__}", f"fails on {report.fail_on}"]
    if report.baseline is not None:
        parts.append(f"baseline {report.baseline}")
    return ["<sub>" + cell(" · ".join(parts)) + "</sub>"]
