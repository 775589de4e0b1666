"""``ResultCache``: one cache directory of entry files and packs (a run's entries in one file), its
use checked first (``unusable``: nothing git tracks, no link, no other work tree)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.check.cache.disk import _read_regular, _real_dir, _write_atomic, evict, evict_packs
from streamwarden.check.cache.entry import FORMAT, Entry, RuleText, _entry_from_dict, _entry_from_json, _entry_to_json
from streamwarden.check.cache.key import Context, _sha, file_state
from streamwarden.check.cache.timing import _restamp
from streamwarden.core import paths
from streamwarden.core.runstate import current
from streamwarden.repo.git import tracks_any

DEFAULT_DIR = ".streamwarden-cache"
MAX_ENTRIES = 20_000  # about 3 KB each: a few tens of MB at most
MAX_ENTRY_BYTES = 4 * 1024 * 1024
PACKS_DIR = "packs"  # a run's entries in one file: the next run reads one file, not one per contract
MAX_PACKS = 4
MAX_PACK_BYTES = 128 * 1024 * 1024


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
