"""Reading the repository at a git ref without touching the work tree.

Everything goes through ``git`` plumbing (rev-parse, merge-base, grep, ls-tree, cat-file --batch,
log), so a pull-request check sees the base branch exactly as committed; each kind of work is one
process for all files (one ``ls-tree``, one ``log``, one ``cat-file --batch``), never one per file.

The base is read as bytes, with nothing the pull request can commit in between. Git reads
``.gitattributes`` from the work tree (and from the index where the work tree has none), and a
pull request commits those: ``*.yaml -diff`` or ``binary`` made ``git grep -I`` skip every base
contract, and an attribute on a path changes how ``log -M`` scores a rename. So every command runs
with an empty directory of its own as work tree and current directory and an index that does not
exist (no in-tree attributes, whoever committed them), ``core.attributesFile`` and the system
attributes off, replace refs and the graft file off (``GIT_NO_REPLACE_OBJECTS``,
``GIT_GRAFT_FILE``), no mailmap; ``grep`` reads every file as text (``-a``, no textconv) and
``cat-file --batch`` returns blobs unconverted (no ``--filters``/``--textconv``). What each
command could otherwise read from the tree:

- ``grep``: the ``diff`` attribute (``-diff``, ``binary``, a textconv driver) decides "binary";
- ``log -M``: the ``diff`` attribute changes the similarity that pairs a rename;
- ``diff --name-only``, ``ls-tree``, ``cat-file``, ``rev-parse``, ``merge-base``: no attribute,
  but replace refs and grafts change which commits and objects they see.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from streamwarden.core.errors import InputError, UsageError

_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_FETCH_HINT = "in CI, check out with full history (actions/checkout `fetch-depth: 0`) or run `git fetch --unshallow`"


class GitError(InputError):
    """A git command failed in a way the user can fix."""


_EMPTY: list[str] = []  # the process's empty directory (made once, removed at exit)


def _empty_dir() -> str:
    """An empty directory of this process, for git's work tree: no ``.gitattributes`` in it or
    below it. Made once; removed when the process that made it exits."""
    if not _EMPTY:
        made = tempfile.mkdtemp(prefix="streamwarden-git-")
        pid = os.getpid()
        _EMPTY.append(made)

        def remove() -> None:
            if os.getpid() == pid:  # not in a forked worker
                shutil.rmtree(made, ignore_errors=True)

        atexit.register(remove)
    return _EMPTY[0]


def _isolated(git_dir: str) -> tuple[list[str], dict[str, str], str]:
    """The command prefix, environment and directory a command runs with: the repository at
    ``git_dir``, and none of the work tree's configuration (module docstring)."""
    empty = _empty_dir()
    env = {
        **os.environ,
        "GIT_DIR": git_dir,
        "GIT_WORK_TREE": empty,
        "GIT_INDEX_FILE": os.path.join(empty, "index"),  # never made: an empty index
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_GRAFT_FILE": os.path.join(empty, "grafts"),  # never made: no grafts
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    prefix = ["git", "-c", f"core.attributesFile={os.path.join(empty, 'attributes')}", "-c", "log.mailmap=false"]
    return prefix, env, empty


@dataclass
class GitRepo:
    top: Path
    git_dir: str | None = field(default=None, compare=False)  # absolute; asked of git when not given

    @classmethod
    def discover(cls, cwd: Path) -> GitRepo:
        try:
            out = subprocess.run(
                ["git", "rev-parse", "--show-toplevel", "--absolute-git-dir"],
                cwd=cwd,
                capture_output=True,
                text=True,
                check=False,
            )
        except FileNotFoundError:
            raise UsageError("--base needs git, and git is not installed") from None
        if out.returncode != 0:
            raise UsageError(
                f"--base needs a git repository, and {cwd} is not inside one",
                hint="run streamwarden from a clone of your repository",
            )
        lines = out.stdout.rstrip("\n").split("\n")
        # (a name with a newline in it: the git directory is asked for on its own)
        repo = cls(Path(lines[0].strip()), lines[1] if len(lines) == 2 else None)
        repo.isolated()  # (the empty directory made by this process, before any worker forks)
        return repo

    def isolated(self) -> tuple[list[str], dict[str, str], str]:
        """How a command runs (:func:`_isolated`), for this repository."""
        if self.git_dir is None:
            out = subprocess.run(
                ["git", "rev-parse", "--absolute-git-dir"], cwd=self.top, capture_output=True, check=False
            )
            if out.returncode != 0:
                raise GitError(f"git rev-parse failed: {out.stderr.decode(errors='replace').strip()}")
            self.git_dir = os.fsdecode(out.stdout.rstrip(b"\n"))
        return _isolated(self.git_dir)

    def git(self, *args: str, input_bytes: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        prefix, env, cwd = self.isolated()
        return subprocess.run([*prefix, *args], cwd=cwd, env=env, input=input_bytes, capture_output=True, check=False)

    def start(self, *args: str) -> Pending:
        """``git(*args)`` started in the background: the caller goes on working (git runs on another
        core) and collects the result with :meth:`Pending.result`."""
        return Pending(self, args)

    def text(self, *args: str) -> str:
        proc = self.git(*args)
        if proc.returncode != 0:
            raise GitError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout.decode("utf-8", errors="replace")

    def is_shallow(self) -> bool:
        proc = self.git("rev-parse", "--is-shallow-repository")
        return proc.stdout.decode().strip() == "true"

    def resolve(self, ref: str) -> str:
        """The commit a ref names; an unknown ref is a clear error (with a hint in a shallow clone)."""
        if ref.startswith("-"):
            raise UsageError(f"{ref!r} is not a git ref")
        proc = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        if proc.returncode != 0:
            hint = _FETCH_HINT if self.is_shallow() else "check the spelling, or `git fetch origin` to get the branch"
            if self.is_shallow():
                raise GitError(
                    f"unknown git ref '{ref}' (this is a shallow clone: the ref may not be fetched)", hint=hint
                )
            raise GitError(f"unknown git ref '{ref}'", hint=hint)
        return proc.stdout.decode().strip()

    def merge_base(self, ref: str, head: str = "HEAD") -> str:
        a = self.resolve(ref)
        b = self.resolve(head)
        proc = self.git("merge-base", a, b)
        if proc.returncode != 0:
            if self.is_shallow():
                raise GitError(
                    f"no merge base between '{ref}' and {head}: the shallow clone does not hold their common history",
                    hint=_FETCH_HINT,
                )
            raise GitError(f"'{ref}' and {head} have no common history")
        return proc.stdout.decode().strip()

    def grep_files(self, commit: str, pattern: str, pathspecs: list[str]) -> list[str]:
        """Paths (repo-relative) at ``commit`` whose content matches the extended regex."""
        return grep_result(self.git(*_grep_args(commit, pattern, pathspecs)), commit)

    def start_grep_files(self, commit: str, pattern: str, pathspecs: list[str]) -> Pending:
        """:meth:`grep_files` in the background (:func:`grep_result` reads its result)."""
        return self.start(*_grep_args(commit, pattern, pathspecs))

    def changed_files(self, old: str, new: str, pathspecs: list[str]) -> list[str]:
        """The files that differ between two commits (added, deleted or modified; no rename pairing)."""
        proc = self.git("diff", "--name-only", "--no-renames", "-z", old, new, "--", *(pathspecs or ["."]))
        if proc.returncode != 0:
            raise GitError(f"git diff failed: {proc.stderr.decode(errors='replace').strip()}")
        return _nul_split(proc.stdout)

    def ls_files(self, commit: str, pathspecs: list[str]) -> list[str]:
        proc = self.git("ls-tree", "-r", "--name-only", "-z", commit, "--", *pathspecs)
        if proc.returncode != 0:
            raise GitError(f"git ls-tree failed: {proc.stderr.decode(errors='replace').strip()}")
        return _nul_split(proc.stdout)

    def read_blobs(self, specs: list[str]) -> dict[str, bytes | None]:
        """``commit:path`` -> content (None when missing), all in one ``git cat-file --batch``.

        The specs go in NUL-terminated (``-z``): a path may hold a newline or any other byte."""
        if not specs:
            return {}
        encoded = [spec.encode("utf-8", errors="surrogateescape") for spec in specs]
        proc = self.git("cat-file", "--batch", "-z", input_bytes=b"".join(e + b"\0" for e in encoded))
        if proc.returncode != 0:
            raise GitError(f"git cat-file failed: {proc.stderr.decode(errors='replace').strip()}")
        out: dict[str, bytes | None] = {}
        data = proc.stdout
        pos = 0
        for spec, raw in zip(specs, encoded, strict=True):
            # "<spec> missing" / "<spec> ambiguous" echo the spec, which may hold a newline
            for word in (b" missing\n", b" ambiguous\n"):
                if data.startswith(raw + word, pos):
                    out[spec] = None
                    pos += len(raw) + len(word)
                    break
            else:
                nl = data.index(b"\n", pos)
                size = int(data[pos:nl].rsplit(b" ", 1)[1])
                pos = nl + 1
                out[spec] = data[pos : pos + size]
                pos += size + 1
        return out

    def blob_ids(self, commit: str, pathspecs: list[str]) -> dict[str, str]:
        """Path -> blob id of every file under the pathspecs' literal directories at ``commit``,
        from one ``git ls-tree -r -z`` (one walk of the trees; no content is read). A ``:(glob)``
        pathspec is listed from its directory before the first wildcard: a superset."""
        return blob_ids_result(self.git(*_ls_tree_args(commit, pathspecs)))

    def start_blob_ids(self, commit: str, pathspecs: list[str]) -> Pending:
        """:meth:`blob_ids` in the background (:func:`blob_ids_result` reads its result)."""
        return self.start(*_ls_tree_args(commit, pathspecs))

    def read(self, commit: str, path: str) -> bytes | None:
        return self.read_blobs([f"{commit}:{path}"])[f"{commit}:{path}"]

    def first_parent_log(self, commit: str, pathspecs: list[str]) -> list[tuple[str, list[tuple[str, str, str]]]]:
        """Every first-parent commit from ``commit`` back that changed a file under ``pathspecs``
        (literal directories), newest first, with its changes as (status, old path, new path):
        one ``git log -z --name-status -M`` for all files (renames detected, a merge compared with
        its first parent). ``follow`` walks it for one file as ``git log --follow`` would."""
        proc = self.git(
            "log",
            "-z",
            "--first-parent",
            "-m",
            "-M",
            "--name-status",
            "--format=%x00%H",
            commit,
            "--",
            *(pathspecs or ["."]),
        )
        if proc.returncode != 0:
            raise GitError(f"git log failed: {proc.stderr.decode(errors='replace').strip()}")
        # -z output: NUL, the commit, NUL, then for each change "[\n]STATUS" NUL path [NUL path] NUL
        tokens = proc.stdout.decode("utf-8", errors="surrogateescape").split("\0")
        log: list[tuple[str, list[tuple[str, str, str]]]] = []
        changes: list[tuple[str, str, str]] | None = None
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            if tok == "":
                if i + 1 < len(tokens) and _COMMIT_ID.fullmatch(tokens[i + 1]):
                    changes = []
                    log.append((tokens[i + 1], changes))
                    i += 2
                else:
                    i += 1
                continue
            status = tok.lstrip("\n")[:1]
            if changes is None or not status:
                i += 1
                continue
            if status in "RC" and i + 2 < len(tokens):
                changes.append((status, tokens[i + 1], tokens[i + 2]))
                i += 3
            elif i + 1 < len(tokens):
                changes.append((status, tokens[i + 1], tokens[i + 1]))
                i += 2
            else:
                i += 1
        return log

    def relpath(self, path: Path) -> str:
        from streamwarden.core.paths import relative_posix, resolved

        rel = relative_posix(resolved(path), self.top_resolved())
        if rel is None:
            raise ValueError(f"{path} is not inside the repository {self.top}")
        return rel

    def top_resolved(self) -> Path:
        """The work tree's top, symbolic links resolved (once)."""
        top = self.__dict__.get("_top_cache")
        if top is None:
            top = self.__dict__["_top_cache"] = self.top.resolve()
        return top


def follow(log: list[tuple[str, list[tuple[str, str, str]]]], path: str, limit: int) -> list[tuple[str, str]]:
    """(commit, path at that commit) for every commit of ``log`` that changed the file ``path``
    names at the newest commit, newest first, following renames (what ``git log --follow
    --name-only`` lists: a path deleted and added again keeps its older commits too)."""
    out: list[tuple[str, str]] = []
    current = path
    for commit, changes in log:
        for status, old, new in changes:
            if new != current:
                continue
            out.append((commit, current))
            if status == "R":
                current = old
            break
        if len(out) >= limit:
            break
    return out


def literal_prefix(pathspec: str) -> str:
    """The directory a pathspec lies under, up to its first wildcard ("" for the whole tree)."""
    spec = pathspec
    if spec.startswith(":("):
        spec = spec[spec.index(")") + 1 :] if ")" in spec else ""
    elif spec.startswith(":"):
        return ""  # short magic: the whole tree
    literal: list[str] = []
    for part in spec.split("/"):
        if any(c in part for c in "*?[\\"):
            break
        literal.append(part)
    else:
        return "/".join(literal).strip("/") if literal != ["."] else ""  # a literal path: itself
    return "/".join(literal).strip("/")


class Pending:
    """A git command running in the background. Its output goes to temporary files, not pipes: a
    pipe nobody reads yet would stop git once full (64 KiB: a grep over a few thousand files)."""

    def __init__(self, repo: GitRepo, args: tuple[str, ...]) -> None:
        self.args = args
        prefix, env, cwd = repo.isolated()
        # the files live as long as the command (closed by result() or close()), not a block
        self._out = tempfile.TemporaryFile()  # noqa: SIM115
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [*prefix, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err
            )
        except BaseException:
            self._close_files()
            raise

    def result(self) -> subprocess.CompletedProcess[bytes]:
        """Wait for git and return what it wrote, as :meth:`GitRepo.git` does."""
        if self._proc is None:
            raise RuntimeError("the result of a background git command was already taken")
        try:
            code = self._proc.wait()
            self._proc = None
            self._out.seek(0)
            self._err.seek(0)
            return subprocess.CompletedProcess(["git", *self.args], code, self._out.read(), self._err.read())
        finally:
            self.close()

    def close(self) -> None:
        """Stop git if it still runs (the run failed before it needed the result); idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        self._close_files()

    def _close_files(self) -> None:
        self._out.close()
        self._err.close()


def _grep_args(commit: str, pattern: str, pathspecs: list[str]) -> tuple[str, ...]:
    # -a: every file is read as text, whatever an attribute or a NUL byte says (a contract with a
    # NUL is listed, and its parse reports it); textconv is off unless asked for
    return ("grep", "-l", "-z", "-a", "--no-textconv", "-E", pattern, commit, "--", *(pathspecs or ["."]))


def grep_result(proc: subprocess.CompletedProcess[bytes], commit: str) -> list[str]:
    """The paths a ``git grep -l -z`` at ``commit`` found (exit 1: none)."""
    if proc.returncode not in (0, 1):
        raise GitError(f"git grep failed: {proc.stderr.decode(errors='replace').strip()}")
    prefix = f"{commit}:"
    return [p[len(prefix) :] for p in _nul_split(proc.stdout) if p.startswith(prefix)]


def _ls_tree_args(commit: str, pathspecs: list[str]) -> tuple[str, ...]:
    prefixes = sorted({literal_prefix(p) for p in pathspecs} or {""})
    if "" in prefixes:
        prefixes = [""]
    return ("ls-tree", "-r", "-z", "--full-tree", commit, "--", *(p for p in prefixes if p))


def blob_ids_result(proc: subprocess.CompletedProcess[bytes]) -> dict[str, str]:
    """Path -> blob id from a ``git ls-tree -r -z`` (entries that are not blobs left out)."""
    if proc.returncode != 0:
        raise GitError(f"git ls-tree failed: {proc.stderr.decode(errors='replace').strip()}")
    out: dict[str, str] = {}
    for record in _nul_split(proc.stdout):
        meta, _, path = record.partition("\t")
        parts = meta.split(" ")
        if len(parts) == 3 and parts[1] == "blob":
            out[path] = parts[2]
    return out


def blob_id(data: bytes, like: str) -> str:
    """The object id git gives a blob of ``data``, in the hash of ``like`` (an id of the same
    repository: SHA-1, or SHA-256 for a repository made with ``--object-format=sha256``)."""
    h = hashlib.sha256() if len(like) == 64 else hashlib.sha1(usedforsecurity=False)
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _nul_split(out: bytes) -> list[str]:
    """Paths from git's ``-z`` output: never quoted, never split at a newline in a name."""
    return [p for p in out.decode("utf-8", errors="surrogateescape").split("\0") if p]


def tracks_any(directory: Path, root: Path) -> bool:
    """Whether git tracks any file under ``directory`` in the work tree at ``root`` (outside a git
    work tree: no). Run in the work tree, not isolated: the question is about its index."""
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--", str(directory.resolve())],
            cwd=root,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and bool(proc.stdout.strip(b"\0"))


def work_tree_commit(directory: Path) -> tuple[str | None, bool | None]:
    """The commit checked out in the work tree holding ``directory``, and whether anything under
    ``directory`` differs from it (None, None: no git work tree, or git failed)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", "."], cwd=directory, capture_output=True, text=True, timeout=10
        )
        return head.stdout.strip(), (bool(status.stdout.strip()) if status.returncode == 0 else None)
    except (OSError, subprocess.SubprocessError):
        return None, None
