"""A cache entry and its on-disk codec: one JSON object each, checked field by field when read (a file
that is not a valid entry for its key is a miss)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streamwarden.check.cache.timing import _FINDING_FIELDS, Timing, _check_clock
from streamwarden.evaluate.findings import Finding, unwrap

# 2: findings without their rule's title and remediation; 3: as arrays; 4: valid for an interval of time
FORMAT = "streamwarden-cache/5"


@dataclass
class Entry:
    name: str
    file: str
    name_line: int
    waivers: list[Any]
    findings: list[Finding]
    deps: list[tuple[str, str]]
    timing: Timing
    writes: dict[str, Any] | None = None  # the tables it writes (writers.Writer.cached), for SW-TABLE-014


# what an entry stores of a finding: not the rule's title and remediation (the policy set's, which is
# part of every key: restored from it, a third of an entry's size), nor the waiver fields (always
# unset before waivers are applied), nor ``more`` (set by a report's cap only, after the run). A
# finding is stored as an array of these, in this order (no field names: a warm run decodes the
# findings of every contract it answers).
_DERIVED = ("title", "remediation", "waived", "waiver", "baselined", "more")
_STORED: tuple[str, ...] = ("pipeline", "rule", "severity", "message", "file", "line", "path", "source")
_STORED += ("evidence", "fingerprint", "value")
if set(_STORED) | set(_DERIVED) != set(_FINDING_FIELDS) or set(_STORED) & set(_DERIVED):
    raise RuntimeError("Finding's fields changed: update the cache's _STORED (and FORMAT)")
_SEVERITIES = frozenset({"error", "warning", "info"})

# rule id -> (title, remediation as METADATA writes it): what to_finding gives a finding of the rule
RuleText = Callable[[str], tuple[str, str]]


def _finding_to_stored(f: Finding, rule_text: RuleText) -> list[Any] | None:
    """The stored form (the ``_STORED`` fields, in order), or None when the finding is not what its
    rule's text restores exactly (such a result is not cached)."""
    title, remediation = rule_text(f.rule)
    if f.title != title or f.remediation != unwrap(remediation) or f.waived or f.baselined or f.waiver is not None:
        return None
    if f.more is not None:
        return None
    return [getattr(f, name) for name in _STORED]


def _finding_from_stored(row: Any, rule_text: RuleText) -> Finding:
    if type(row) is not list or len(row) != len(_STORED):
        raise ValueError("finding fields")
    pipeline, rule, severity, message, file, line, path, source, evidence, fingerprint, value = row
    # JSON gives exact types: no subclass to allow
    if not (type(pipeline) is type(rule) is type(message) is type(path) is type(source) is type(fingerprint) is str):
        raise ValueError("a text field is not a string")
    if file is not None and type(file) is not str:
        raise ValueError("file")
    if line is not None and type(line) is not int:
        raise ValueError("line")
    if type(severity) is not str or severity not in _SEVERITIES or type(evidence) is not dict:
        raise ValueError("severity/evidence")
    title, remediation = rule_text(rule)
    return Finding(
        pipeline=pipeline,
        rule=rule,
        severity=severity,
        title=title,
        message=message,
        file=file,
        line=line,
        path=path,
        source=source,
        remediation=remediation,
        evidence=evidence,
        fingerprint=fingerprint,
        value=value,
    )


def _entry_to_json(key: str, e: Entry, rule_text: RuleText) -> str | None:
    findings = [_finding_to_stored(f, rule_text) for f in e.findings]
    if any(f is None for f in findings):
        return None
    return json.dumps(
        {
            "format": FORMAT,
            "key": key,
            "name": e.name,
            "file": e.file,
            "name_line": e.name_line,
            "waivers": e.waivers,
            "deps": [list(d) for d in e.deps],
            "valid_from": e.timing.valid_from,
            "valid_until": e.timing.valid_until,
            "exact": e.timing.exact,
            "clock": [[i, path] for i, path in e.timing.clock],
            "findings": findings,
            "writes": e.writes,
        },
        sort_keys=True,
        allow_nan=False,
    )


def _entry_from_json(key: str, text: str, rule_text: RuleText) -> Entry:
    return _entry_from_dict(key, json.loads(text), rule_text)


def _entry_from_dict(key: str, d: Any, rule_text: RuleText) -> Entry:
    if not isinstance(d, dict) or d.get("format") != FORMAT or d.get("key") != key:
        raise ValueError("format or key")
    name, file, line = d.get("name"), d.get("file"), d.get("name_line")
    if not isinstance(name, str) or not isinstance(file, str) or not isinstance(line, int) or isinstance(line, bool):
        raise ValueError("name")
    waivers, deps, findings = d.get("waivers"), d.get("deps"), d.get("findings")
    if not isinstance(waivers, list) or not isinstance(deps, list) or not isinstance(findings, list):
        raise ValueError("lists")
    pairs: list[tuple[str, str]] = []
    for p in deps:  # one loop, no generator frames: every hit of a warm run comes through here
        if type(p) is not list or len(p) != 2 or type(p[0]) is not str or type(p[1]) is not str:
            raise ValueError("deps")
        pairs.append((p[0], p[1]))
    bounds = [d.get("valid_from"), d.get("valid_until"), d.get("exact")]
    if any(b is not None and type(b) is not int for b in bounds):
        raise ValueError("time bounds")
    if "writes" not in d or not (d["writes"] is None or isinstance(d["writes"], dict)):
        raise ValueError("writes")
    decoded = [_finding_from_stored(f, rule_text) for f in findings]
    return Entry(
        name=name,
        file=file,
        name_line=line,
        waivers=waivers,
        findings=decoded,
        deps=pairs,
        timing=Timing(bounds[0], bounds[1], bounds[2], _check_clock(decoded, d.get("clock"))),
        writes=d["writes"],
    )
