"""Baselines: adopt streamwarden in a repository that already has findings.

``check --write-baseline FILE`` records the fingerprints of the current findings; ``check --baseline
FILE`` marks findings whose fingerprint is recorded as *baselined*: they are still reported, but do
not count towards errors, warnings or the exit code (``Finding.counts``, decided in one place).
A new finding, or a changed offending value, has a new fingerprint and fails as usual.

Fingerprints come from pipeline, rule, path and the offending value, never line numbers, so
unrelated edits do not invalidate a baseline. Waived findings are never recorded: when a waiver
expires, its finding must fail again rather than hide in the baseline.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.core.errors import InputError, UsageError
from streamwarden.evaluate.findings import Finding

BASELINE_VERSION = 1
MAX_BYTES = 20 * 1024 * 1024
NOTE = (
    "Findings that existed when this repository adopted streamwarden. They are still reported but do not "
    "fail a run. Matched by fingerprint (pipeline, rule, field path, offending value), never by line. "
    "Refresh with: streamwarden check --write-baseline FILE"
)


@dataclass
class Baseline:
    file: str
    fingerprints: set[str] = field(default_factory=set)


@dataclass
class BaselineResult:
    matched: int
    stale: int  # baseline entries no finding matched any more (fixed, or the value changed)


def load_baseline(path: str) -> Baseline:
    """Read a baseline written by ``--write-baseline`` (or a ``--format json`` findings document)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError:
        raise UsageError(
            "baseline file does not exist", hint="create it with `streamwarden check --write-baseline FILE`"
        ) from None
    if size > MAX_BYTES:
        raise InputError(f"baseline file is larger than {MAX_BYTES // (1024 * 1024)} MiB", file=path)
    try:
        return parse_baseline(p.read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read baseline: {exc}", file=path) from None


def parse_baseline(text: str, shown: str) -> Baseline:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"baseline is not valid JSON: {exc.msg}", file=shown, line=exc.lineno) from None
    except RecursionError:
        raise InputError(
            "baseline is nested too deeply to be a baseline",
            file=shown,
            hint='a baseline is {"findings": [...]}: create it with `streamwarden check --write-baseline FILE`',
        ) from None
    entries = doc.get("findings") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise InputError(
            'baseline must be a JSON object with a "findings" list',
            file=shown,
            hint="create it with `streamwarden check --write-baseline FILE`",
        )
    version = doc.get("version", BASELINE_VERSION)
    if version != BASELINE_VERSION:
        raise InputError(
            f"unsupported baseline version {version!r} (this streamwarden reads {BASELINE_VERSION})", file=shown
        )
    prints: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str) or not entry["fingerprint"]:
            raise InputError(f'baseline entry {i} has no "fingerprint" string', file=shown, path=f"findings[{i}]")
        if entry.get("waived") is True:  # a findings document: waived findings are not debt to accept
            continue
        prints.add(entry["fingerprint"])
    return Baseline(file=shown, fingerprints=prints)


def load_trusted_baseline(path: str, root: Path, ref: str) -> tuple[Baseline, int]:
    """With ``--base``, the baseline as committed on the trusted ref, like policies and waivers: a
    pull request cannot accept its own new findings by adding them to the baseline. Returns the
    baseline and how many entries the working tree adds that are therefore not applied."""
    from streamwarden.repo.git import GitRepo

    repo = GitRepo.discover(root)
    commit = repo.resolve(ref)
    local = Path(path)
    try:
        rel = repo.relpath(local)
    except ValueError:
        raise UsageError(f"with --base the baseline must be a file in the repository, and {path} is not") from None
    blob = repo.read(commit, rel)
    head = load_baseline(path) if local.is_file() else None
    if blob is None and head is None:
        load_baseline(path)  # the usual "does not exist" error
    if blob is None:
        trusted = Baseline(file=f"{rel}@{ref}")
    elif len(blob) > MAX_BYTES:
        raise InputError(f"baseline file is larger than {MAX_BYTES // (1024 * 1024)} MiB", file=f"{rel}@{ref}")
    else:
        trusted = parse_baseline(blob.decode("utf-8", errors="replace"), f"{rel}@{ref}")
    trusted.file = path
    added = len(head.fingerprints - trusted.fingerprints) if head is not None else 0
    return trusted, added


def apply_baseline(findings: list[Finding], baseline: Baseline) -> BaselineResult:
    """Mark the findings the baseline accepts (in place); waived findings are left as they are."""
    matched: set[str] = set()
    for f in findings:
        if not f.waived and f.fingerprint in baseline.fingerprints:
            f.baselined = True
            matched.add(f.fingerprint)
    return BaselineResult(matched=len(matched), stale=len(baseline.fingerprints - matched))


def baseline_document(findings: list[Finding]) -> dict[str, Any]:
    entries: dict[str, dict[str, Any]] = {}
    for f in findings:
        if f.waived or not f.fingerprint or f.fingerprint in entries:
            continue
        entries[f.fingerprint] = {
            "fingerprint": f.fingerprint,
            "pipeline": f.pipeline,
            "rule": f.rule,
            "severity": f.severity,
            "path": f.path,
            "file": f.file,
            "message": f.message,
        }
    ordered = sorted(entries.values(), key=lambda e: (e["pipeline"], e["rule"], e["path"], e["fingerprint"]))
    return {"version": BASELINE_VERSION, "tool": "streamwarden", "note": NOTE, "findings": ordered}


def write_baseline(findings: list[Finding], path: str) -> int:
    """Write the baseline atomically; returns the number of entries."""
    doc = baseline_document(findings)
    target = Path(path)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise UsageError(f"cannot write baseline: {exc.strerror or exc}", file=path) from None
    return len(doc["findings"])


@dataclass
class BaselineUse:
    """What ``--baseline`` / ``--write-baseline`` did in a run."""

    file: str | None  # the baseline applied (None: no baseline)
    notes: list[str] = field(default_factory=list)  # for the user: what was written, not applied, stale


def use_baseline(
    findings: list[Finding], baseline_file: str | None, write_file: str | None, root: Path, trusted_ref: str | None
) -> BaselineUse:
    """Apply ``--baseline`` (as committed on ``trusted_ref`` with ``--base``, so a pull request
    cannot accept its own findings), or write ``--write-baseline`` and apply it (the run passes)."""
    if write_file:
        n = write_baseline(findings, write_file)
        apply_baseline(findings, Baseline(write_file, {f.fingerprint for f in findings if not f.waived}))
        return BaselineUse(
            write_file,
            [
                f"wrote {n} finding{'s' if n != 1 else ''} to the baseline {write_file}; "
                f"runs with --baseline {write_file} fail only on new findings"
            ],
        )
    if not baseline_file:
        return BaselineUse(None)
    notes: list[str] = []
    if trusted_ref:
        baseline, added = load_trusted_baseline(baseline_file, root, trusted_ref)
        if added:
            notes.append(
                f"{added} baseline entr{'ies' if added != 1 else 'y'} in {baseline_file} not on {trusted_ref} "
                f"{'are' if added != 1 else 'is'} not applied: with --base the baseline is read from the trusted ref"
            )
    else:
        baseline = load_baseline(baseline_file)
    applied = apply_baseline(findings, baseline)
    if applied.stale:
        notes.append(
            f"{applied.stale} baseline entr{'ies match' if applied.stale != 1 else 'y matches'} no finding any more "
            f"(fixed?): refresh {baseline_file} with --write-baseline"
        )
    return BaselineUse(baseline_file, notes)
