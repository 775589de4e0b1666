"""The result cache's keys: the run's part (``Context``: the policy set, the engine and its build,
streamwarden's own files, the root, the known keys, the mode) and the contract's (``file_key``), and
the state of a file a result depends on (``file_state``)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden import __version__
from streamwarden.check.cache.entry import FORMAT
from streamwarden.yamlsafe.read import READ_FLAGS, read_to_end


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
