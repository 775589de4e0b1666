"""Paths, in one module: resolution (each directory once per run, in the run's state), how a
path is shown (root-relative, forward slashes), and confinement: whether a path lies inside a
top directory, and what lies on the way down to it (a symbolic link, a nested git work tree) that
a commit could plant. Contract discovery, the deployment source, a pull request's base side and
the result cache all ask here; none writes its own test."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path

from streamwarden.core.escape import shown_name
from streamwarden.core.runstate import current


def display_path(path: Path, root: Path, resolved: Path | None = None) -> str:
    """Root-relative with forward slashes inside the root (SARIF and annotations need it), else as
    given; always valid Unicode (:func:`shown_name`)."""
    inside = relative_posix(resolved or _resolve_cached(path), resolved_root(root))
    return shown_name(str(path) if inside is None else inside)


def display_path_str(path: str, root: Path) -> str:
    """``display_path`` of a path given as a string, without making Path objects (the base of a
    pull request shows thousands of files)."""
    absolute = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    if absolute in current().real:  # discovery reached it without a symbolic link: it is its own resolution
        inside = relative_str(absolute, str(resolved_root(root)))
        return shown_name(path if inside is None else inside)
    directory, name = os.path.split(absolute)
    if os.sep != "/" or name in ("", ".", "..") or os.path.islink(absolute):
        return display_path(Path(path), root)
    inside = relative_str(os.path.join(resolved_dir(directory), name), str(resolved_root(root)))
    return shown_name(path if inside is None else inside)


def relative_posix(path: Path, top: Path) -> str | None:
    """``path.relative_to(top).as_posix()`` for resolved absolute paths, None when ``path`` is not
    under ``top``: compared as strings (a run computes this for every file, several times)."""
    if os.sep != "/":
        try:
            return path.relative_to(top).as_posix()
        except ValueError:
            return None
    return relative_str(str(path), str(top))


def relative_str(p: str, t: str) -> str | None:
    """``p`` relative to ``t`` (both absolute, as strings), or None when it is not under it."""
    if p == t:
        return "."
    prefix = t if t.endswith("/") else t + "/"
    return p[len(prefix) :] if p.startswith(prefix) else None


def _resolve_cached(path: Path) -> Path:
    return resolved(path)


def resolved_root(root: Path) -> Path:
    return _resolved_root(root if os.path.isabs(root) else Path(os.getcwd(), root))


@functools.lru_cache(maxsize=8)
def _resolved_root(root: Path) -> Path:
    return root.resolve()


def resolved_dir(directory: str) -> str:
    """An absolute directory, resolved from its parent's resolution (one lstat per new part).
    Strings, not Path objects: a run resolves thousands of files."""
    dirs = current().dirs
    found = dirs.get(directory)
    if found is None:
        parent, name = os.path.split(directory)
        if parent == directory or name in ("", ".", "..") or os.path.islink(directory):
            found = os.fspath(Path(directory).resolve())
        else:
            found = os.path.join(resolved_dir(parent), name)
        dirs[directory] = found
    return found


def resolved(path: Path) -> Path:
    """``path.resolve()``, with each directory resolved once per run (a run resolves every contract
    file several times: discovery, the cache key, the base; realpath costs an lstat per part). A
    file that is itself a symbolic link is resolved in full."""
    state = current()
    if not os.path.isabs(path):  # keyed by where it is: the working directory may change between runs
        path = Path(os.getcwd(), path)
    found = state.resolved.get(path)
    if found is None:
        found = state.resolved[path] = path if os.fspath(path) in state.real else _resolve(path)
        state.resolved.setdefault(found, found)  # a resolution resolves to itself (asked again by later steps)
    return found


def _resolve(path: Path) -> Path:
    name = os.fspath(path)
    try:
        if os.path.islink(name) or path.name in ("", ".", ".."):
            return _resolve_link(path)
    except OSError:
        return _resolve_link(path)
    absolute = name if os.path.isabs(name) else os.path.join(os.getcwd(), name)
    directory, base = os.path.split(absolute)
    return Path(os.path.join(resolved_dir(directory), base))


def _resolve_link(path: Path) -> Path:
    """``path.resolve()``; a symbolic link loop (Python raises RuntimeError before 3.13) is the
    path itself, made absolute: reading it then fails as the loop it is, reported with the file."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def inside(path: Path, top: Path) -> bool:
    """Whether ``path``, resolved, lies in ``top``, resolved (``top`` itself included)."""
    return relative_posix(path.resolve(), top.resolve()) is not None


def _steps_down(top: str, rel: str) -> Iterator[str]:
    """Each path from ``top`` down to ``top/rel``, one part at a time (``top`` itself excluded)."""
    at = top
    for part in rel.replace(os.sep, "/").split("/"):
        if part and part != ".":
            at = os.path.join(at, part)
            yield at


def through_link(top: Path, rel: str) -> bool:
    """Whether ``rel`` or a directory above it, below ``top``, is a symbolic link."""
    return any(os.path.islink(at) for at in _steps_down(os.fspath(top), rel))


def planted(directory: Path, root: Path) -> str | None:
    """Why a commit could decide what ``directory`` holds although git tracks nothing in it: a
    symbolic link, or a nested git work tree (``.git``), on its way down from ``root`` (the literal
    path, links not followed). None: it is outside ``root``, or neither."""
    literal = os.path.abspath(directory)
    for top in (os.fspath(root), os.path.realpath(root)):
        if literal == top or literal.startswith(top.rstrip(os.sep) + os.sep):
            rel = literal[len(top) :].strip(os.sep)
            break
    else:
        return None
    for at in _steps_down(top, rel):
        if os.path.islink(at):
            return (
                "it is reached through a symbolic link in the repository, which a commit could point at "
                "results it brought; use a plain directory git ignores"
            )
        if os.path.lexists(os.path.join(at, ".git")):
            return (
                "it is inside another git work tree (a submodule?), whose files a commit could bring; "
                "use a plain directory git ignores"
            )
    return None


def repo_prefix(root: Path) -> str:
    """Where the configuration root sits inside the git repository ("" at its top), so reports name
    repository-relative files even when streamwarden.yaml lives in a subdirectory. Without a
    ``.git`` above ``root`` (a CI checkout without git metadata), ``GITHUB_WORKSPACE`` is the top."""
    root = root.resolve()
    tops = [d for d in (root, *root.parents) if (d / ".git").exists()]
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if not tops and workspace:
        tops = [Path(workspace).resolve()]
    for top in tops:
        rel = relative_posix(root, top)
        if rel is not None:
            return "" if rel == "." else rel
    return ""
