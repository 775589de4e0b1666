"""How long a cached result holds, decided from what its evaluation read (``timing_for``), and where
its findings show the time they were computed at (the clock paths a hit restamps)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from streamwarden.evaluate.findings import Finding

# The one built-in package whose reads of the time the cache knows: it compares input.now_ms with
# each waiver's expires_end_ms (and, where the document carries config.waivers.max_horizon_ms,
# with the instant the expires day comes within that horizon), and shows it in an expired
# waiver's evidence (timing_for). tests/check/test_cache_time.py counts its read sites: a new one must
# be taught here first.
_WAIVER_PACKAGE = "streamwarden.waiver"
_DAY_MS = 86_400_000

_FINDING_FIELDS = [f.name for f in fields(Finding)]


def finding_to_json(f: Finding) -> dict[str, Any]:
    return {name: getattr(f, name) for name in _FINDING_FIELDS}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


ClockPath = list[str | int]  # a path into a finding's evidence: keys and list indexes


@dataclass
class Timing:
    """When an entry's findings hold: for every ``now`` in [``valid_from``, ``valid_until``)
    (None: unbounded on that side), or only at ``exact`` (a ``--now`` replay of the same instant).
    ``clock``: where the findings show the time they were computed at (a finding's index, and the
    path to the value in its evidence); a hit shows its own time there, as a fresh evaluation
    would."""

    valid_from: int | None = None
    valid_until: int | None = None
    exact: int | None = None
    clock: list[tuple[int, ClockPath]] = field(default_factory=list)

    def holds(self, now: int) -> bool:
        if self.exact is not None:
            return now == self.exact
        return (self.valid_from is None or now >= self.valid_from) and (
            self.valid_until is None or now < self.valid_until
        )


def timing_for(
    *,
    reads: frozenset[str],
    files: list[Any],
    document: dict[str, Any],
    now: int,
    found: list[Finding],
    evaluate_at: Callable[[int, list[str]], list[Finding]],
) -> Timing:
    """How long a result computed at ``now`` holds, from what its evaluation read.

    ``reads``: the policy files (display names) that may have read ``input.now_ms`` in the
    evaluation (the engine says which: ``Engine.evaluate_reading``); ``files``: the files selected
    for the ``document`` evaluated. None read it: the result holds at any time. Only the built-in
    waiver package read it: that package compares the time with each waiver's ``expires_end_ms``
    (and, with a ``config.waivers.max_horizon_ms`` in the document, with that end less a day and
    the horizon: when the expires day comes within reach) and nothing else, so the result holds
    between the threshold at or before ``now`` and the next one after it, as long as no other
    evaluated file may read that package's rules (a custom file that
    references ``data.streamwarden.waiver`` would see the time through them). It also copies the
    time into an expired waiver's evidence: evaluating that package (``evaluate_at``: the findings
    of the given packages at a time) at ``now`` and at another instant of the interval shows where
    (a value that is ``now`` in one and the other instant in the other); anything else that
    differs makes the result hold only at ``now``. Any other file that read the time (a custom
    policy, whose use of it the cache cannot know): only at ``now``."""
    if not reads:
        return Timing()
    modelled = {f.display for f in files if f.builtin and f.package == _WAIVER_PACKAGE}
    if not reads <= modelled:
        return Timing(exact=now)
    ends = _waiver_thresholds(document)
    if ends is None:
        return Timing(exact=now)
    if not ends:
        return Timing()  # no waiver end to compare the time with: the package never reads it
    from streamwarden.engine.timeread import may_reference

    if any(may_reference(f.data_refs, _WAIVER_PACKAGE) for f in files if f.display not in modelled):
        return Timing(exact=now)
    valid_from = max((e for e in ends if e <= now), default=None)
    valid_until = min((e for e in ends if e > now), default=None)
    if valid_until is None or now + 1 < valid_until:
        other = now + 1
    elif valid_from is None or now - 1 >= valid_from:
        other = now - 1
    else:
        return Timing(exact=now)  # an interval of one millisecond
    packages = [_WAIVER_PACKAGE]
    here = evaluate_at(now, packages)
    clock = clock_paths(here, evaluate_at(other, packages), now, other)
    at = _positions(here, found)
    if clock is None or at is None:
        return Timing(exact=now)
    return Timing(valid_from=valid_from, valid_until=valid_until, clock=[(at[i], path) for i, path in clock])


def _waiver_thresholds(document: dict[str, Any]) -> list[int] | None:
    """The instants the built-in waiver package compares the time with, for ``document``; None
    when a value it compares with is not what a contract and a configuration hold (unknown)."""
    contract = document.get("contract")
    waivers = (contract.get("waivers") if isinstance(contract, dict) else None) or []
    config = document.get("config")
    horizon = ((config.get("waivers") or {}) if isinstance(config, dict) else {}).get("max_horizon_ms")
    if not isinstance(waivers, list) or (horizon is not None and not _is_int(horizon)):
        return None
    compared = [w.get("expires_end_ms") for w in waivers if isinstance(w, dict)]
    ends = [e for e in compared if e is not None]
    if not all(_is_int(e) for e in ends):
        return None
    shifts = [0] if horizon is None else [0, -_DAY_MS - int(horizon)]
    return sorted({int(e) + shift for e in ends for shift in shifts})


def _positions(part: list[Finding], found: list[Finding]) -> list[int] | None:
    """Where each finding of ``part`` (one package's, evaluated on its own) is in ``found`` (the
    whole evaluation's, at the same time); None if one is not there."""
    rows = [json.dumps(finding_to_json(f), sort_keys=True) for f in found]
    used: set[int] = set()
    out: list[int] = []
    for f in part:
        row = json.dumps(finding_to_json(f), sort_keys=True)
        i = next((i for i, r in enumerate(rows) if r == row and i not in used), None)
        if i is None:
            return None
        used.add(i)
        out.append(i)
    return out


def clock_paths(here: list[Finding], there: list[Finding], now: int, other: int) -> list[tuple[int, ClockPath]] | None:
    """Where two evaluations, at ``now`` and at ``other``, differ only by showing their own time
    (an integer in a finding's evidence); None when they differ in anything else."""
    if len(here) != len(there):
        return None
    out: list[tuple[int, ClockPath]] = []
    for i, (a, b) in enumerate(zip(here, there, strict=True)):
        if any(getattr(a, name) != getattr(b, name) for name in _FINDING_FIELDS if name != "evidence"):
            return None
        paths = _clock_leaves(a.evidence, b.evidence, now, other, [])
        if paths is None:
            return None
        out += [(i, p) for p in paths]
    return out


def _clock_leaves(a: Any, b: Any, now: int, other: int, path: ClockPath) -> list[ClockPath] | None:
    if type(a) is type(b) and a == b:
        return []
    if type(a) is int and type(b) is int and a == now and b == other:
        return [path]
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        out: list[ClockPath] = []
        for k in a:
            found = _clock_leaves(a[k], b[k], now, other, [*path, k])
            if found is None:
                return None
            out += found
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = _clock_leaves(x, y, now, other, [*path, i])
            if found is None:
                return None
            out += found
        return out
    return None


def _restamp(findings: list[Finding], clock: list[tuple[int, ClockPath]], now: int) -> None:
    """Show ``now`` where the findings show the time they were computed at (a copy of each
    evidence changed: a pack's entries are read once, but kept for the run's next pack)."""
    copied: set[int] = set()
    for i, path in clock:
        f = findings[i]
        if i not in copied:
            f.evidence = json.loads(json.dumps(f.evidence))
            copied.add(i)
        node: Any = f.evidence
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = now


def _step(node: Any, step: Any) -> Any:
    if type(step) is str and isinstance(node, dict) and step in node:
        return node[step]
    if type(step) is int and isinstance(node, list) and 0 <= step < len(node):
        return node[step]
    raise ValueError("clock path")


def _check_clock(findings: list[Finding], clock: Any) -> list[tuple[int, ClockPath]]:
    """An entry's clock paths, each leading to an integer in a finding's evidence (else ValueError)."""
    if not isinstance(clock, list):
        raise ValueError("clock")
    out: list[tuple[int, ClockPath]] = []
    for item in clock:
        if type(item) is not list or len(item) != 2 or type(item[0]) is not int or type(item[1]) is not list:
            raise ValueError("clock")
        i, path = item
        if not 0 <= i < len(findings) or not path:
            raise ValueError("clock")
        node: Any = findings[i].evidence
        for step in path:
            node = _step(node, step)
        if type(node) is not int:
            raise ValueError("clock value")
        out.append((i, list(path)))
    return out
