"""The result cache of ``check --cache DIR``: a contract's findings, reused while nothing they
depend on has changed.

What a result depends on, and so what its key holds (``Context`` for the run's part, ``file_key``
for the contract's):

- the contract's text and where it is (its path as shown, and as resolved: deployment paths are
  relative to it);
- every file it reads: the deployment files ``job.deployment`` names are recorded with their
  content hash (or that they are missing) and hashed again on every lookup;
- the policy set (the source of every built-in and custom file, as loaded: in a pull request the
  trusted ref's), the engine and its version, streamwarden's version and the hash of its own
  package files (schemas and key lists included), the repository root, ``flink.known_keys``;
- time, decided from what the evaluation read (``timing_for``), never from a policy's text: the
  engine says which policy files' read sites of ``input.now_ms`` ran (engine/timeread.py,
  ``Engine.evaluate_reading``). None: the result holds at any time. Only the built-in waiver
  package (SW-WAIVER-001's expiry and horizon, the one such read of a static check's built-in
  files): it compares the time with each waiver's end and with the instant its expires day comes
  within ``waivers.max_horizon`` (part of the key), so the entry holds from the waiver end at or before
  its time to the next one after it, and the places where its findings show the time (an expired
  waiver's evidence) show the time of the run that reuses it. Anything else (a custom policy
  whose read of the time ran, however it reached it): only at that exact time (a ``--now`` replay).

Not cached: live facts (a run with ``--env`` neither reads nor writes the cache), a contract that
does not load (its errors are reported afresh), a contract a pull request changes (its base and
history are part of its input; an unchanged one under unchanged policies is evaluated without its
base, so its entry is the plain check's), runs that keep every input document (``diff``). The
contract review of ``check --base --format markdown|github`` uses the cache: its hits are the
contracts the pull request leaves as they are (``RunResult.cached``), for which the review lists
nothing (an entry with a finding of a rule that compares with the base is a miss there: the
review would list it with the contract's consumers).

Entries are data, never code: one JSON file each, checked field by field when read (a file that
is not a valid entry for its key is a miss and is overwritten), written to a temporary file and
renamed into place, and read without following symbolic links. The directory is bounded
(``MAX_ENTRIES``; the entries used least recently go first). A run also leaves its entries in one
*pack* (``packs/``, the ``MAX_PACKS`` most recent): the next run reads the newest pack once and
looks each file up there first (the same run again, or in a pull request the base branch's run),
then in its own file; a pack entry is checked exactly as an entry file is (key, fields, time,
the files it read). A cache directory with files that git
tracks is not used: a commit cannot plant results. In self-check mode
(``STREAMWARDEN_SELF_CHECK=1``) a run answers from the cache as any run does, then evaluates every
hit again: a difference in what it reports, or a hit the contract review would list as changed,
is an error.

Why one module of this size: the key, the entry codec, the store, the prefetch child and the
directory's safety checks are one on-disk format; apart, a change to an entry's shape would be made
in several files that must agree.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from streamwarden import __version__
from streamwarden.core import paths
from streamwarden.core.runstate import current
from streamwarden.evaluate.findings import Finding, unwrap
from streamwarden.repo.git import tracks_any
from streamwarden.yamlsafe.read import MAX_BYTES, READ_FLAGS, read_bounded, read_to_end

# 2: findings without their rule's title and remediation; 3: as arrays; 4: valid for an interval of time
FORMAT = "streamwarden-cache/5"
DEFAULT_DIR = ".streamwarden-cache"
MAX_ENTRIES = 20_000  # about 3 KB each: a few tens of MB at most
MAX_ENTRY_BYTES = 4 * 1024 * 1024
PACKS_DIR = "packs"  # a run's entries in one file: the next run reads one file, not one per contract
MAX_PACKS = 4
MAX_PACK_BYTES = 128 * 1024 * 1024
_EVICT_SLACK = 0.1  # evict down to 90% of MAX_ENTRIES, so eviction does not run on every write
# The one built-in package whose reads of the time the cache knows: it compares input.now_ms with
# each waiver's expires_end_ms (and, where the document carries config.waivers.max_horizon_ms,
# with the instant the expires day comes within that horizon), and shows it in an expired
# waiver's evidence (timing_for). tests/check/test_cache_time.py counts its read sites: a new one must
# be taught here first.
_WAIVER_PACKAGE = "streamwarden.waiver"
_DAY_MS = 86_400_000


def _sha(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        b = p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()


_TOOL: str | None = None


def tool_fingerprint() -> str:
    """streamwarden's version and the names, sizes and modification times of its own files (code,
    schemas, key lists): a development checkout invalidates its cache on every edit, not only on a
    release (the stat of ~150 files; hashing their bytes would cost more than a warm run)."""
    global _TOOL
    if _TOOL is None:
        from streamwarden.core.resources import PACKAGE, schema_dir

        h = hashlib.sha256(__version__.encode())
        for top in (PACKAGE, schema_dir()):
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for name in sorted(filenames):
                    if name.endswith((".py", ".json", ".rego", ".txt")):
                        st = os.stat(os.path.join(dirpath, name))
                        h.update(f"{dirpath}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        _TOOL = f"{__version__}:{h.hexdigest()}"
    return _TOOL


def engine_fingerprint(name: str, options: dict[str, Any]) -> str:
    return json.dumps({"engine": name, "version": engine_build(name), "options": options}, sort_keys=True, default=str)


def engine_build(name: str) -> str:
    """The installed build of the embedded engine: the names, sizes and modification times of the
    ``regorus`` package's files, found without importing it or reading package metadata (a
    reinstall or an upgrade changes them)."""
    if name != "regorus":
        return "unknown"
    import importlib.util

    try:
        spec = importlib.util.find_spec("regorus")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "unknown"
    paths: list[str] = []
    for top in [spec.origin or "", *(spec.submodule_search_locations or [])]:
        if os.path.isdir(top):
            for dirpath, dirnames, filenames in os.walk(top):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                paths += [os.path.join(dirpath, n) for n in sorted(filenames)]
        elif top:
            paths.append(top)
    h = hashlib.sha256()
    for path in paths:
        with contextlib.suppress(OSError):
            st = os.stat(path)
            h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


@dataclass
class Context:
    """The run's part of every key."""

    key: str


def make_context(
    *,
    policy_files: Iterable[Any],
    engine: str,
    engine_options: dict[str, Any],
    root: Path,
    known_keys: Iterable[str],
    mode: str,
    waiver_horizon_ms: int,
) -> Context:
    parts: list[str] = [FORMAT, tool_fingerprint(), engine_fingerprint(engine, engine_options)]
    parts += [str(root.resolve()), json.dumps(sorted(known_keys)), mode, str(waiver_horizon_ms)]
    for f in policy_files:
        parts += [f.display, f.package, "builtin" if f.builtin else "custom", f.source]
    return Context(key=_sha(*parts))


def file_key(context: Context, shown: str, resolved: Path, text: str) -> str:
    return _sha(context.key, shown, str(resolved), text)


def deployment_paths(contract_data: dict[str, Any], contract_path: Path) -> list[str]:
    """The files ``job.deployment`` names, as the deployment gatherer opens them."""
    job = contract_data.get("job")
    entries = job.get("deployment") if isinstance(job, dict) else None
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        return []
    base = contract_path.parent
    return [str(base / e) for e in entries if isinstance(e, str) and e.strip()]


_S_ISREG = stat.S_ISREG


_TOO_LARGE = "too-large"  # file_state with a limit, never a state: the run hashes such a file itself


def file_state(path: str, limit: int | None = None) -> str:
    """What a dependency holds: the hash of its bytes, ``missing`` or ``other`` (not a regular
    file, unreadable); its resolved location is part of it (a symbolic link moved elsewhere).
    With ``limit``, a regular file larger than it is ``_TOO_LARGE``, not read (the prefetch child).
    (Called for every file a cache hit depends on: os-level calls, no helper frames.)"""
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    if not _S_ISREG(st.st_mode):
        return "other"  # a FIFO or a device is not opened
    if limit is not None and st.st_size > limit:
        return _TOO_LARGE
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return "other"
    try:
        opened = os.fstat(fd)
        if not _S_ISREG(opened.st_mode):
            return "other"
        try:  # where the open file is, links resolved: one readlink of /proc/self/fd on Linux
            where: str | None = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = None
        if where is None or not where.startswith("/") or where.endswith(" (deleted)"):
            from streamwarden.core.paths import resolved

            where = str(resolved(Path(path)))
        data = read_to_end(fd, opened.st_size)
    except OSError:
        return "other"
    finally:
        os.close(fd)
    return _sha(where, data)


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


_FINDING_FIELDS = [f.name for f in fields(Finding)]
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


def finding_to_json(f: Finding) -> dict[str, Any]:
    return {name: getattr(f, name) for name in _FINDING_FIELDS}


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


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


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


@dataclass
class Stats:
    hits: int = 0
    misses: int = 0
    bypassed: int = 0
    written: int = 0

    def __str__(self) -> str:
        hits = f"{self.hits} hit{'s' if self.hits != 1 else ''}"
        return f"cache {hits}, {self.misses} miss{'es' if self.misses != 1 else ''}"


class ResultCache:
    """One cache directory; every failure to read or write it is a miss, never an error."""

    def __init__(self, directory: Path, context: Context, rule_text: RuleText) -> None:
        """``rule_text``: a rule's title and remediation in the run's policy set (entries store
        findings without them)."""
        self.directory = directory
        self.entries = directory / "v1"
        self.context = context
        self.rule_text = rule_text
        self.stats = Stats()
        self._states: dict[str, str] = {}
        self._prefetched: dict[str, str] = {}  # states hashed by a StatePrefetch child
        self._pack: dict[str, Any] = {}  # key -> entry (as JSON data) of the pack read by load_pack
        self._pack_path: Path | None = None

    # -- opening --------------------------------------------------------------------------------

    @staticmethod
    def unusable(directory: Path, root: Path) -> str | None:
        """Why the directory cannot hold the cache, or None when it can: it can be created and
        holds nothing git tracks (a commit cannot plant entries; restoring it with actions/cache
        leaves its files untracked), and inside the repository it is reached through no symbolic
        link and lies in no other git work tree (a submodule): a commit could point either at entries
        it brought along, which ``git ls-files`` does not list."""
        planted = paths.planted(directory, root)
        if planted is not None:
            return planted
        try:
            directory.mkdir(parents=True, exist_ok=True)
            if not directory.is_dir():
                return "it is not a directory"
            marker = directory / ".gitignore"
            if not marker.exists():
                _write_atomic(marker, "# created by streamwarden: a result cache, never committed\n*\n")
            tag = directory / "CACHEDIR.TAG"
            if not tag.exists():
                _write_atomic(
                    tag,
                    "Signature: 8a477f597d28d172789f06886806bc55\n# streamwarden result cache (check --cache)\n",
                )
        except FileExistsError:
            return "a file of that name is in the way"
        except OSError as exc:
            return f"it cannot be created or written ({exc.strerror or exc})"
        if tracks_any(directory, root):
            return "git tracks files in it, and a commit must not be able to plant results; use a directory git ignores"
        return None

    # -- dependencies ---------------------------------------------------------------------------

    def state(self, path: str) -> str:
        """A dependency's state, hashed once per run. A file the run has read already (discovery
        reads every YAML file it walks: the run's state, core/runstate.py) is hashed from those bytes, not
        read again; its state is the one :func:`file_state` gives: the bytes and the resolved path.
        Else a :class:`StatePrefetch` child's answer, if it hashed the file, else the file now."""
        s = self._states.get(path)
        if s is None:
            raw = current().get(path)
            s = self._states[path] = (
                _sha(path, raw) if raw is not None else self._prefetched.get(path) or file_state(path)
            )
        return s

    def use_prefetched(self, states: dict[str, str]) -> None:
        """States a :class:`StatePrefetch` child hashed while this run did other work. A file the
        run has read (readahead) is still hashed from those bytes, which are the ones it parses."""
        self._prefetched = states

    def deps_of(self, paths: Iterable[str]) -> list[tuple[str, str]]:
        return [(p, self.state(p)) for p in paths]

    # -- lookup and store -----------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        return self.entries / key[:2] / f"{key[2:]}.json"

    def lookup(self, key: str, now: int, accept: Callable[[Entry], bool] | None = None) -> Entry | None:
        """The entry of ``key`` (from the pack, else its own file) if it still holds at ``now``
        (its time shown where its findings show it) and the hash of every file it read is the
        same; ``accept``: whether the run can use it (else a miss)."""
        packed = self._pack.get(key)
        if packed is not None:
            try:
                entry = _entry_from_dict(key, packed, self.rule_text)
            except (ValueError, TypeError, KeyError, RecursionError):
                entry = None
            if entry is not None and self._holds(entry, now, accept):
                self.stats.hits += 1
                _restamp(entry.findings, entry.timing.clock, now)
                return entry
            del self._pack[key]  # superseded: its own file (or a fresh result) goes in the next pack
        entry = self._read(key)
        if entry is not None and self._holds(entry, now, accept):
            self.stats.hits += 1
            with contextlib.suppress(OSError):
                os.utime(self._path(key))  # recently used: evicted last
            _restamp(entry.findings, entry.timing.clock, now)
            return entry
        self.stats.misses += 1
        return None

    def _holds(self, entry: Entry, now: int, accept: Callable[[Entry], bool] | None) -> bool:
        return (
            entry.timing.holds(now)
            and all(self.state(p) == s for p, s in entry.deps)
            and (accept is None or accept(entry))
        )

    def _read(self, key: str) -> Entry | None:
        raw = _read_regular(self._path(key), MAX_ENTRY_BYTES)
        if raw is None:
            return None
        try:
            return _entry_from_json(key, raw.decode("utf-8"), self.rule_text)
        except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError):
            return None  # a corrupt or foreign entry is a miss

    def store(self, key: str, entry: Entry) -> None:
        try:
            text = _entry_to_json(key, entry, self.rule_text)
        except (TypeError, ValueError):
            return  # a value JSON cannot hold exactly: not cached
        if text is None or len(text) > MAX_ENTRY_BYTES:  # None: a finding its rule's text does not restore
            return
        path = self._path(key)
        try:
            _real_dir(self.entries)
            _real_dir(path.parent)
            _write_atomic(path, text)
            self.stats.written += 1
        except OSError:
            pass

    # -- packs: a run's entries in one file -----------------------------------------------------

    def load_pack(self) -> None:
        """Read the most recently used pack (one JSON file): ``lookup`` answers from it first.
        Any pack is correct for any run (each entry is under its own key, and checked as an entry
        file is); the newest is the likeliest to hold this run's files: the same run again, or in
        a pull request the base branch's run."""
        path = newest_pack(self.directory)
        entries = _read_pack(path) if path is not None else None
        if path is not None and entries is not None:
            self._pack = entries
            self._pack_path = path

    def store_pack(self, keys: list[str]) -> None:
        """After a run: its entries (``keys``, the files the cache may answer) in one pack, unless
        the pack read at the start already held each of them. Entries come from that pack or
        from their files (written by this run); one that is in neither is left out."""
        if all(k in self._pack for k in keys):
            if self._pack_path is not None:
                with contextlib.suppress(OSError):
                    os.utime(self._pack_path)  # most recently used: read first next time
            return
        entries: dict[str, Any] = {}
        for k in keys:
            packed = self._pack.get(k)
            if packed is None:
                raw = _read_regular(self._path(k), MAX_ENTRY_BYTES)
                if raw is None:
                    continue
                try:
                    packed = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
            entries[k] = packed
        if not entries:
            return
        try:
            text = json.dumps({"format": FORMAT, "entries": entries}, allow_nan=False)
        except (TypeError, ValueError):
            return
        if len(text) > MAX_PACK_BYTES:
            return
        packs = self.directory / PACKS_DIR
        try:
            _real_dir(packs)
            _write_atomic(packs / f"{_sha(*keys)}.json", text)
        except OSError:
            return
        evict_packs(packs, MAX_PACKS)

    def finish(self) -> None:
        """Evict the least recently used entries beyond MAX_ENTRIES (only when this run wrote)."""
        if self.stats.written:
            evict(self.entries, MAX_ENTRIES)


def newest_pack(directory: Path) -> Path | None:
    """The most recently used pack of a cache directory, if any."""
    try:
        listed = [e for e in os.scandir(directory / PACKS_DIR) if not e.name.startswith(".")]  # not a temporary file
        found = [(e.stat(follow_symlinks=False).st_mtime, e.path) for e in listed]
    except OSError:
        return None
    return Path(max(found)[1]) if found else None


def _read_pack(path: Path) -> dict[str, Any] | None:
    """A pack's entries (key -> entry as JSON data, each checked when looked up), or None."""
    raw = _read_regular(path, MAX_PACK_BYTES)
    if raw is None:
        return None
    try:
        d = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    entries = d.get("entries") if isinstance(d, dict) and d.get("format") == FORMAT else None
    return entries if isinstance(entries, dict) else None


PREFETCH_MIN = 200  # contracts: below it, a child process costs more than the hashing it takes over
PREFETCH_MIN_PACK = 64 * 1024  # bytes: a smaller pack holds fewer entries than that (about 350 B each)
MAX_PREFETCH = 50_000  # dependencies a child hashes at most (a pack holds at most MAX_PACK_BYTES)
PREFETCH_WAIT = 2.0  # seconds the run waits for the child's answer before hashing on its own
_STATE_TEXT = re.compile(r"[0-9a-f]{64}|missing|other")


class StatePrefetch:
    """The states of the newest pack's dependencies, hashed in a forked child while the run does
    other work (discovery, a pull request's merge base, loading the pack).

    A cache hit is checked against the state of every file its contract reads. A file discovery
    read (a deployment file beside the contracts, found by a directory walk) is hashed from those
    bytes; one it did not read (the configuration's globs name only the contracts, as in a pull
    request) was opened, read and hashed by each lookup, one after another: half the time of a warm
    pull request's lookups at 5,000 contracts, while the second core waited. The run starts the
    child before discovery (run._start_prefetch) and cancels it when discovery finds fewer than
    ``minimum`` contracts. The child hashes the files the newest pack's entries depend on as
    :func:`file_state` does, skipping the ones the run has read and any larger than a contract may
    be; the run takes its answer when it looks its files up (``ResultCache.use_prefetched``), and
    hashes on its own whatever the child did not answer: no answer within ``PREFETCH_WAIT``
    seconds, a child that failed, an answer that is not well formed.

    A state is the file's bytes at the moment it is hashed, in the child as in the run: the run
    reads a file it parses after its state was taken, so an edit in between is a miss next time,
    never a stale hit."""

    def __init__(self, pid: int, fd: int) -> None:
        self._pid: int | None = pid
        self._fd = fd
        self.minimum = PREFETCH_MIN  # contracts: a run that finds fewer cancels the child

    @classmethod
    def start(cls, directory: Path) -> StatePrefetch | None:
        """Fork the child (POSIX with two cores or more, and a pack of ``PREFETCH_MIN_PACK`` bytes
        or more to read); None otherwise."""
        if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
            return None
        pack = newest_pack(directory)
        try:
            if pack is None or os.stat(pack).st_size < PREFETCH_MIN_PACK:
                return None
        except OSError:
            return None
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:  # the child: hash, answer, and leave without running the parent's exit code
            code = 1
            try:
                os.close(r)
                view = memoryview(json.dumps(_dependency_states(pack)).encode("utf-8"))
                while view:
                    view = view[os.write(w, view) :]
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        return cls(pid, r)

    def take(self, wait: float = PREFETCH_WAIT) -> dict[str, str]:
        """The child's states ({} when it has none to give); the child is gone afterwards."""
        if self._pid is None:
            return {}
        import select

        deadline = time.monotonic() + wait
        chunks: list[bytes] = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                    return {}
                chunk = os.read(self._fd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            if self._reap() != 0:
                return {}
            states = json.loads(b"".join(chunks))
        except (OSError, ValueError, RecursionError):
            return {}
        finally:
            self.cancel()
        if not isinstance(states, dict) or not all(
            type(k) is str and type(v) is str and _STATE_TEXT.fullmatch(v) for k, v in states.items()
        ):
            return {}
        return states

    def cancel(self) -> None:
        """Stop the child if it still runs and release it (idempotent)."""
        pid, self._pid = self._pid, None
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        if pid is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)

    def _reap(self) -> int:
        pid, self._pid = self._pid, None
        if pid is None:
            return -1
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)


def _dependency_states(pack: Path) -> dict[str, str]:
    """In the child: ``file_state`` of each dependency the pack's entries name, but those the run
    has read (readahead) and those larger than a contract may be (the run hashes them itself)."""
    entries = _read_pack(pack) or {}
    paths: dict[str, None] = {}
    for entry in entries.values():
        deps = entry.get("deps") if isinstance(entry, dict) else None
        for pair in deps if isinstance(deps, list) else ():
            if type(pair) is list and len(pair) == 2 and type(pair[0]) is str:
                paths[pair[0]] = None
        if len(paths) >= MAX_PREFETCH:
            break
    out: dict[str, str] = {}
    for path in paths:
        if current().get(path) is None:
            state = file_state(path, MAX_BYTES)
            if state != _TOO_LARGE:
                out[path] = state
    return out


def _read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes, read without following a symbolic
    link or waiting on a FIFO; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = read_bounded(fh, st.st_size, limit)
        return raw if len(raw) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def evict_packs(packs: Path, keep: int) -> None:
    """Keep the ``keep`` most recently used packs (a pack holds every entry of a run: a few MB at
    5,000 contracts); temporary files left by a killed run go too."""
    now = time.time()
    found: list[tuple[float, str]] = []
    try:
        for e in os.scandir(packs):
            mtime = e.stat(follow_symlinks=False).st_mtime
            if not e.name.startswith("."):
                found.append((mtime, e.path))
            elif now - mtime > 3600:
                _unlink(e.path)
    except OSError:
        return
    found.sort(reverse=True)
    for _, p in found[keep:]:
        _unlink(p)


def _real_dir(path: Path) -> None:
    """Create ``path`` as a directory; one that is a symbolic link (or not a directory) is refused."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(f"{path} is not a directory")


def _write_atomic(path: Path, text: str) -> None:
    import tempfile  # only a run that writes needs it

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def evict(entries: Path, limit: int) -> int:
    """Remove the oldest entries (by modification time, which a hit refreshes) until at most
    ``limit * (1 - slack)`` remain, when there are more than ``limit``; also stale temporary files."""
    found: list[tuple[float, str]] = []
    now = time.time()
    try:
        subdirs = list(os.scandir(entries))
    except OSError:
        return 0
    for sub in subdirs:
        if not sub.is_dir(follow_symlinks=False):
            continue
        try:
            for e in os.scandir(sub.path):
                if not e.is_file(follow_symlinks=False):
                    continue
                mtime = e.stat(follow_symlinks=False).st_mtime
                if e.name.startswith(".tmp-"):
                    if now - mtime > 3600:  # left by a killed run
                        _unlink(e.path)
                    continue
                found.append((mtime, e.path))
        except OSError:
            continue
    if len(found) <= limit:
        return 0
    found.sort()
    excess = len(found) - int(limit * (1 - _EVICT_SLACK))
    for _, p in found[:excess]:
        _unlink(p)
    return excess


def _unlink(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
