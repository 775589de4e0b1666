"""Finding and loading contracts: safe YAML, schema validation with line numbers, normalization.

Why one module of this size: finding a contract (the globs, the walk, which YAML files are meant
as contracts) and loading it share one decision, what a contract file is and where it may be
read from (never through a link out of the repository); kept together, discovery and loading
cannot disagree on it. Splitting the walk out is the next step if the file grows further."""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.contracts.normalize import UnitError, lower_enums, normalize_contract
from streamwarden.contracts.schemawalk import walker_for
from streamwarden.contracts.validate import fast_check_for, validate_document
from streamwarden.core import selfcheck
from streamwarden.core.errors import ContractErrors, InputError, StreamwardenError
from streamwarden.core.escape import shown_name
from streamwarden.core.paths import display_path, relative_posix, relative_str, resolved, resolved_dir, resolved_root
from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema
from streamwarden.core.runstate import current
from streamwarden.core.secrets import scrub
from streamwarden.yamlsafe.read import (
    YamlDocument,
    decode_utf8,
    join_index,
    join_key,
    load_single,
    parse_documents,
    read_bytes,
)

KIND = "PipelineContract"
_KIND_LINE = re.compile(r"^kind:\s*[\"']?PipelineContract[\"']?\s*(#.*)?$", re.MULTILINE)
API_GROUP = "streamwarden/"
_CONFIG_NAMES = ("streamwarden.yaml", "streamwarden.yml")
# a quick pre-filter before parsing: the text mentions a streamwarden apiVersion or a kind at all
_MAYBE_CONTRACT = re.compile(r"^\s*(apiVersion:\s*[\"']?streamwarden/|kind:)", re.MULTILINE | re.IGNORECASE)
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"}
# a value `streamwarden init` could not derive: TODO(owner), TODO(consumer), ...
TODO_MARKER = re.compile(r"^\s*TODO\(")


@dataclass
class Contract:
    """One loaded pipeline contract."""

    name: str
    file: str  # as shown to the user (root-relative where possible)
    path: Path  # absolute
    data: dict[str, Any]  # normalized: durations ms, sizes bytes, enums lower-case
    raw: dict[str, Any]  # as written (after YAML parsing)
    doc: YamlDocument = field(repr=False)

    @property
    def directory(self) -> Path:
        return self.path.parent

    def line_of(self, path: str) -> int:
        return self.doc.line_of(path)


def load_contract(path: Path, root: Path, text: str | None = None) -> Contract:
    """Load one contract file; raises ContractErrors (all errors of the file) or InputError."""
    resolved_path = resolved(path)
    shown = display_path(path, root, resolved_path)
    # an impossible date is one schema error among the file's others (format: date)
    if text is None:
        doc = load_single(path, shown, keep_bad_dates=True)
    else:
        docs = [d for d in parse_documents(text, shown, keep_bad_dates=True) if d.data is not None]
        if not docs:
            raise InputError("the file is empty (no YAML document)", file=shown, line=1)
        if len(docs) > 1:
            raise InputError(f"expected one YAML document, found {len(docs)}", file=shown, line=docs[1].start_line)
        doc = docs[0]
    return contract_from_document(doc, path, resolved_path, text=text)


def warm_contract_schema() -> None:
    """Load and compile the contract schema now (the validator, the fast check, the walker), so
    that fork workers inherit it instead of each compiling their own."""
    schema = load_schema(CONTRACT_SCHEMA)
    walker_for(schema)
    fast_check_for(schema)


def _no_todo_possible(text: str) -> bool:
    """No value of a YAML text can hold a ``TODO(`` marker: the text never writes TODO, and has no
    escape (a backslash: ``"\\x54ODO("``) and no tag (``!``: ``!!binary``) that could spell one."""
    return "TODO" not in text and "\\" not in text and "!" not in text


def contract_from_document(
    doc: YamlDocument, path: Path, resolved: Path | None = None, *, text: str | None = None
) -> Contract:
    """``text``: the document's source, when at hand (a text that cannot hold a TODO marker is
    not walked for one)."""
    shown = doc.file
    if not isinstance(doc.data, dict):
        kind = "a list" if isinstance(doc.data, list) else f"a single value ({doc.data!r})"[:80]
        raise InputError(
            f"a contract must be a mapping at the top level, not {kind}",
            file=shown,
            line=doc.start_line,
            hint="start the file with `apiVersion: streamwarden/v1` and `kind: PipelineContract`",
        )
    schema = load_schema(CONTRACT_SCHEMA)
    prepared = lower_enums(walker_for(schema), schema, doc.data)
    errors = validate_document(doc, prepared, schema)
    if text is not None and _no_todo_possible(text):
        todos = []
        if selfcheck.enabled() and todo_errors(doc):
            raise selfcheck.SelfCheckError(f"{shown} holds a TODO marker its text was judged unable to hold")
    else:
        todos = todo_errors(doc)
    if todos:  # the TODO is the error; the schema's complaint about the same field adds nothing
        placeholders = {t.path for t in todos}
        errors = [*todos, *(e for e in errors if e.path not in placeholders)]
    if errors:
        raise ContractErrors(list(errors))
    try:
        data = normalize_contract(prepared, schema)
    except UnitError as exc:
        raise InputError(str(exc), file=shown, line=doc.line_of(exc.path), path=exc.path) from None
    return Contract(
        name=str(data["metadata"]["name"]),
        file=shown,
        path=resolved or path.resolve(),
        data=data,
        raw=doc.data,
        doc=doc,
    )


def todo_errors(doc: YamlDocument) -> list[InputError]:
    """Every value that is still a ``TODO(...)`` marker (what ``streamwarden init`` could not
    derive): an unreviewed contract never passes ``validate`` or ``check`` by accident."""
    out: list[InputError] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, join_key(path, str(key)))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, join_index(path, index))
        elif isinstance(node, str) and TODO_MARKER.match(node):
            shown = scrub(node.strip())  # before the cut: a cut could split a credential
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            out.append(
                InputError(
                    f"fill the TODO: {shown} is a placeholder for a value streamwarden cannot derive",
                    file=doc.file,
                    line=doc.line_of(path),
                    path=path,
                    hint="replace the marker with the real value (or delete the field or list entry); "
                    "validate and check refuse the contract while a TODO is left",
                )
            )

    walk(doc.data, "")
    return out


def discover_contracts(
    paths: Sequence[str],
    root: Path,
    globs: Iterable[str] = (),
    every_match: bool = False,
    texts: dict[Path, str] | None = None,
    others: dict[str, bytes] | None = None,
) -> tuple[list[Path], list[StreamwardenError]]:
    """Files to load: FILE args as given; DIR args searched for YAML that is meant as a contract.

    With no paths, the config's globs (relative to ``root``); ``every_match`` (globs written in
    ``streamwarden.yaml``): every file they match is a contract. Otherwise a file is one when its
    ``kind`` is PipelineContract or close to it (a typo), or its ``apiVersion`` is
    ``streamwarden/...``: a contract with a misspelled or missing kind is loaded, and so reported,
    never skipped. YAML that does not parse is a candidate too (it may be a broken contract).

    ``texts``: filled with the text of each file read to decide, for the loader (one read per file).
    ``others``: filled with the bytes of each file read and found not to be a contract, by its
    resolved path (the deployment files beside the contracts: run_check keeps them for the run in
    the run's state, core/runstate.py, so the gatherer and the result cache do not read them again).
    """
    found: list[Path] = []
    errors: list[StreamwardenError] = []
    if not paths:
        top = resolved_root(root)
        for pattern in globs or ["contracts/**/*.yaml"]:
            for p in _glob_files(root, pattern):
                if relative_posix(resolved(p), top) is None:  # a symbolic link that leads out
                    errors.append(
                        InputError(
                            "leads outside the repository (a symbolic link?): it is not read",
                            file=display_path(p, root),
                            hint="contracts live in the repository; replace the link with the file",
                        )
                    )
                elif p.name in _CONFIG_NAMES:
                    # a configuration the globs match is no contract; a file of that name written
                    # as one is (a FIFO or device goes on to the loader, whose read refuses it)
                    if _looks_like_contract(p, texts, others):
                        found.append(p)
                elif every_match or _looks_like_contract(p, texts, others):
                    found.append(p)
        return _dedupe(found), errors
    # a path named inside the repository reads files of the repository only, as the globs do: a
    # symbolic link a pull request commits there (to ~/.config/gh/hosts.yml...) is not followed
    top = resolved_root(root)
    spelled = os.path.abspath(root)

    def leads_out(f: Path, where: str | None = None) -> bool:
        written = os.path.abspath(f)
        if not any(relative_str(written, str(t)) is not None for t in (spelled, top)):
            return False  # named outside the repository on purpose
        return relative_str(where, str(top)) is None if where is not None else relative_posix(resolved(f), top) is None

    def refused(f: Path) -> InputError:
        return InputError(
            "leads outside the repository (a symbolic link?): it is not read",
            file=display_path(f, root),
            hint="contracts live in the repository; replace the link with the file",
        )

    named: list[Path] = []
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            given = os.fspath(p)
            top_resolved = resolved_dir(given if os.path.isabs(given) else os.path.join(os.getcwd(), given))
            top_head = top_resolved if top_resolved.endswith(os.sep) else top_resolved + os.sep
            for name, below in _walk_yaml(p):
                where = top_head + below if below is not None else None
                if leads_out(Path(name), where):
                    errors.append(refused(Path(name)))  # before a byte is read
                    continue
                f = _contract_candidate(name, texts, others, where)
                if f is None:
                    continue
                named.append(f)
                if where is not None:
                    # the walk entered no symbolic link and the file is none: its resolution is
                    # the resolved directory's and the rest of its path (no lstat per file)
                    current().resolved.setdefault(f, Path(where))
                    current().real.add(where)  # later steps ask for the resolved path's own resolution
        elif p.exists():
            named.append(p)
        else:
            errors.append(
                InputError(
                    "path does not exist",
                    file=shown_name(arg),
                    hint="give a contract file or a directory that holds contracts",
                )
            )
    for f in named:
        if leads_out(f):
            errors.append(refused(f))
        else:
            found.append(f)
    return _dedupe(found), errors


def _glob_files(root: Path, pattern: str) -> list[Path]:
    """``sorted(root.glob(pattern))`` without its directories: one ``os.scandir`` per directory
    and a path object for each match only (``Path.glob`` builds one for every directory it
    passes, 10,000 at 5,000 contracts). Patterns of literal parts, ``*``/``?`` parts and ``**``
    in a tree without symbolic links; anything else (a symbolic link met on the way, another
    wildcard, an error) is ``Path.glob``'s, so the files found are the same."""
    found = _scan_glob(root, pattern)
    if found is None:
        return [p for p in sorted(root.glob(pattern)) if not p.is_dir()]
    # in Path order: part by part ("a/x" before "a-b/x"), without making a Path to compare
    paths = [Path(f) for f in sorted(found, key=lambda f: f.split("/"))]
    if root.is_absolute() and root == resolved_root(root):
        # no part below the resolved root is a symbolic link (the scan saw every one): each
        # file is its own resolution, known without an lstat per file
        for p in paths:
            current().resolved.setdefault(p, p)
            current().real.add(os.fspath(p))
    return paths


class _UseGlob(Exception):
    """Something the scandir glob leaves to Path.glob."""


_WILDCARD_PART = re.compile(r"[*?]")


def _scan_glob(root: Path, pattern: str) -> set[str] | None:
    """The non-directory files ``pattern`` matches under ``root`` (as strings), or None where
    Path.glob must answer (see :func:`_glob_files`)."""
    parts = pattern.split("/")
    if (
        os.sep != "/"
        or os.path.isabs(pattern)
        or parts[-1] == "**"
        or any(p in ("", ".", "..") or "[" in p or "\\" in p or ("**" in p and p != "**") for p in parts)
    ):
        return None
    matchers: list[str | re.Pattern[str] | None] = [
        None if p == "**" else re.compile(fnmatch.translate(p)) if _WILDCARD_PART.search(p) else p for p in parts
    ]
    out: set[str] = set()
    top = os.fspath(root)
    try:
        _scan_from(top, matchers, 0, out)
    except (_UseGlob, OSError):
        return None
    return out


def _scan_from(
    directory: str,
    matchers: list[str | re.Pattern[str] | None],
    i: int,
    out: set[str],
    listed: list[os.DirEntry[str]] | None = None,
) -> None:
    """The matches of ``matchers[i:]`` below ``directory`` into ``out``; ``listed``: its entries,
    when ``**`` listed them already."""
    m = matchers[i]
    last = i == len(matchers) - 1
    if m is None and i + 2 == len(matchers) and matchers[-1] is not None:
        _scan_below(directory, matchers[-1], out, listed)  # the common tail: **/<name or *.yaml>
        return
    if m is None:  # **: this directory and every one below it
        entries = _entries(directory) if listed is None else listed
        _scan_from(directory, matchers, i + 1, out, entries)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                _scan_from(entry.path, matchers, i, out)
        return
    if isinstance(m, str):  # a literal part: looked up (one listed already is known)
        path = os.path.join(directory, m)
        found = next((e for e in listed if e.name == m), None) if listed is not None else None
        if found is not None:
            is_dir = found.is_dir(follow_symlinks=False)
        elif listed is not None and m.isascii() and all(e.name.lower() != m.lower() for e in listed):
            return  # not there, in any case (a file system may ignore it): nothing to look up
        else:
            try:
                st = os.lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                return
            if stat.S_ISLNK(st.st_mode):
                raise _UseGlob
            is_dir = stat.S_ISDIR(st.st_mode)
        if last:
            if not is_dir:
                out.add(path)
        elif is_dir:
            _scan_from(path, matchers, i + 1, out)
        return
    for entry in _entries(directory) if listed is None else listed:
        if not m.fullmatch(entry.name):
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if last:
            if not is_dir:
                out.add(entry.path)
        elif is_dir:
            _scan_from(entry.path, matchers, i + 1, out)


def _scan_below(
    top: str, m: str | re.Pattern[str], out: set[str], listed: list[os.DirEntry[str]] | None = None
) -> None:
    """``**/<m>`` from ``top``, ``m`` the pattern's last part: the files named ``m`` (or matching
    it) in ``top`` and every directory below it, as :func:`_scan_from` finds them part by part,
    in one pass over each directory's entries (a contract tree has a directory per pipeline). A
    symbolic link anywhere leaves the glob to Path.glob, as :func:`_entries` does."""
    literal, pattern = (m, None) if isinstance(m, str) else (None, m)
    folded = literal.lower() if literal is not None and literal.isascii() else None
    stack = [top]

    def visit(entries: Iterable[os.DirEntry[str]]) -> bool:
        """Files matched into ``out``, directories onto the stack; whether ``literal`` must be
        looked up (not listed, but maybe there in another case or normalization)."""
        seen = False  # an entry named exactly m
        near = folded is None  # an entry named m in another case (or a name no case folds)
        for entry in entries:
            if entry.is_symlink():
                raise _UseGlob  # Path.glob's own rules for links (they differ between Python versions)
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
                if name == literal:
                    seen = True  # a directory of that name: no file here
            elif pattern is not None:
                if pattern.fullmatch(name):
                    out.add(entry.path)
            elif name == literal:
                out.add(entry.path)
                seen = True
            if not near and name.lower() == folded:
                near = True
        return literal is not None and not seen and near

    while stack:
        directory = stack.pop()
        if listed is not None and directory is top:
            look_up = visit(listed)
        else:
            with os.scandir(directory) as it:
                look_up = visit(it)
        if not look_up:
            continue  # not there, in any case (a file system may ignore it): nothing to look up
        assert literal is not None
        try:
            st = os.lstat(os.path.join(directory, literal))
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISLNK(st.st_mode):
            raise _UseGlob
        if not stat.S_ISDIR(st.st_mode):
            out.add(os.path.join(directory, literal))


def _entries(directory: str) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as it:
        entries = list(it)
    if any(e.is_symlink() for e in entries):
        raise _UseGlob  # Path.glob's own rules for links (they differ between Python versions)
    return entries


def _walk_yaml(directory: Path) -> list[tuple[str, str | None]]:
    """The YAML files under ``directory``, as ``os.walk`` finds them (symbolic links to
    directories not followed; hidden and tool directories skipped; each directory's files in
    name order, then its subdirectories in name order), one ``os.scandir`` per directory. Each
    with its path below ``directory``, or None for a file that is a symbolic link."""
    out: list[tuple[str, str | None]] = []
    _walk_into(os.fspath(directory), "", out)
    return out


def _walk_into(top: str, below: str, out: list[tuple[str, str | None]]) -> None:
    try:
        with os.scandir(top) as it:
            entries = list(it)
    except OSError:
        return  # as os.walk: a directory that cannot be listed is skipped
    dirs: list[tuple[str, os.DirEntry[str]]] = []
    files: list[tuple[str, os.DirEntry[str]]] = []
    for entry in entries:
        name = entry.name
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            # a symbolic link to a directory is not followed (os.walk's followlinks=False)
            if name not in _SKIP_DIRS and not name.startswith(".") and not entry.is_symlink():
                dirs.append((name, entry))
        elif name.endswith((".yaml", ".yml")):  # (a streamwarden.yaml is read like any: a contract or not)
            files.append((name, entry))
    # paths joined by hand (os.path.join per file and directory is a third of the walk)
    sep = os.sep
    head = top if top.endswith(sep) else top + sep
    lead = below + sep if below else ""
    files.sort()
    for name, entry in files:
        out.append((head + name, None if entry.is_symlink() else lead + name))
    dirs.sort()
    for name, entry in dirs:
        _walk_into(entry.path, lead + name, out)


def _contract_candidate(
    name: str, texts: dict[Path, str] | None, others: dict[str, bytes] | None = None, where: str | None = None
) -> Path | None:
    """``_looks_like_contract`` of a path given as a string: its Path (made for a contract
    only), or None. ``where``: the file's resolved path, known to the walk (a file reached without
    a symbolic link), under which ``others`` keeps the bytes of a file that is no contract."""
    try:
        raw = read_bytes(name)
        text = decode_utf8(raw, name)
    except InputError:
        return Path(name)
    if not _looks_like_text(name, text):
        if where is not None:
            if others is not None:
                others[where] = raw
            current().real.add(where)  # a file beside the contracts (a deployment file they name): resolved
        return None
    path = Path(name)
    if texts is not None:
        texts[path] = text
    return path


def _looks_like_contract(
    path: Path, texts: dict[Path, str] | None = None, others: dict[str, bytes] | None = None
) -> bool:
    """Meant as a contract: ``kind`` PipelineContract or a near miss, or an ``apiVersion`` of
    streamwarden; unparseable YAML counts (reported by the loader). A contract's text is kept in
    ``texts``, for the loader; another file's bytes in ``others``, by its resolved path."""
    try:
        raw = read_bytes(path)
        text = decode_utf8(raw, os.fspath(path))
    except InputError:
        return True
    meant = _looks_like_text(path, text)
    if meant and texts is not None:
        texts[path] = text
    elif not meant and others is not None:
        others[os.fspath(resolved(path))] = raw
    return meant


def meant_as_contract_text(path: str | Path, text: str) -> bool:
    """Whether discovery takes a file with this text for a contract (see :func:`_looks_like_contract`):
    the base side of a pull request decides the same way."""
    return _looks_like_text(path, text)


def _looks_like_text(path: str | Path, text: str) -> bool:
    if "PipelineContract" in text and _KIND_LINE.search(text):
        return True
    if not _MAYBE_CONTRACT.search(text):
        return False  # cheap: no streamwarden apiVersion and no kind near "PipelineContract"
    if _other_kind("\n" + text):
        return False  # a FlinkDeployment, a ConfigMap, ...: not parsed here
    try:
        docs = parse_documents(text, str(path))
    except InputError:
        return True
    return any(isinstance(d.data, dict) and _meant_as_contract(d.data) for d in docs)


# a top-level `kind: Word` line, and what else can start a top-level key or document; each
# starts with the newline before its line (searched in "\n" + text: a literal first character
# is found by a fast scan, where ^ in MULTILINE mode is tried at every position)
_TOP_KIND = re.compile(r"\nkind:[ \t]*([A-Za-z][A-Za-z0-9.]*)[ \t]*(?:#.*)?$", re.MULTILINE)
_KIND_WORD = re.compile(r"\nkind\b")
_TOP_OTHER = re.compile(r"\n(?:---[ \t]*)?[\"'{\[?!&*|>%]")


def _other_kind(text: str) -> bool:
    """The file plainly declares another kind: every top-level ``kind`` is a plain word far from
    PipelineContract, nothing mentions streamwarden, and no top-level key is written in a way the
    line scan could miss (quoted, flow style, complex keys, tags, anchors). Deployment manifests
    beside the contracts are skipped without a YAML parse. ``text``: the file's text after a
    newline."""
    if "streamwarden" in text.lower() or _TOP_OTHER.search(text):
        return False
    kinds = _TOP_KIND.findall(text)
    lines = len(_KIND_WORD.findall(text))
    return bool(kinds) and len(kinds) == lines and not any(near_kind(k) for k in kinds)


def _meant_as_contract(data: dict[Any, Any]) -> bool:
    api = data.get("apiVersion")
    if isinstance(api, str) and api.strip().lower().startswith(API_GROUP):
        return True
    kind = data.get("kind")
    return isinstance(kind, str) and near_kind(kind)


@functools.lru_cache(maxsize=256)  # a repository holds few kinds, each in many files
def near_kind(kind: str) -> bool:
    """``kind`` is PipelineContract or a typo of it (case, a letter or two, spaces)."""
    squashed = re.sub(r"[\s_-]", "", kind).lower()
    return squashed == KIND.lower() or difflib.SequenceMatcher(None, squashed, KIND.lower()).ratio() >= 0.8


def _dedupe(paths: list[Path]) -> list[Path]:
    seen: set[Path] = set()
    out = []
    for p in paths:
        r = resolved(p)
        if r not in seen:
            seen.add(r)
            out.append(p)
    return out


def load_contracts(files: Sequence[Path], root: Path) -> tuple[list[Contract], list[StreamwardenError]]:
    """Load every file; a broken one is reported and the others still load. Names must be unique."""
    contracts: list[Contract] = []
    errors: list[StreamwardenError] = []
    by_name: dict[str, Contract] = {}
    for f in files:
        try:
            c = load_contract(f, root)
        except ContractErrors as exc:
            errors.extend(exc.errors)
            continue
        except StreamwardenError as exc:
            errors.append(exc)
            continue
        if c.name in by_name:
            errors.append(
                InputError(
                    f"pipeline name '{c.name}' is already used by {by_name[c.name].file}",
                    file=c.file,
                    line=c.line_of("metadata.name"),
                    path="metadata.name",
                    hint="metadata.name must be unique: it pairs contracts across branches",
                )
            )
            continue
        by_name[c.name] = c
        contracts.append(c)
    return contracts, errors
