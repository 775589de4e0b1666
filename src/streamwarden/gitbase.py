"""Reading the repository at a git ref without touching the work tree.

Everything goes through ``git`` plumbing (rev-parse, merge-base, grep, cat-file --batch, log), so
a pull-request check sees the base branch exactly as committed.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from streamwarden.errors import InputError, UsageError

_FETCH_HINT = "in CI, check out with full history (actions/checkout `fetch-depth: 0`) or run `git fetch --unshallow`"


class GitError(InputError):
    """A git command failed in a way the user can fix."""


@dataclass
class GitRepo:
    top: Path

    @classmethod
    def discover(cls, cwd: Path) -> GitRepo:
        try:
            out = subprocess.run(
                ["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True, text=True, check=False
            )
        except FileNotFoundError:
            raise UsageError("--base needs git, and git is not installed") from None
        if out.returncode != 0:
            raise UsageError(
                f"--base needs a git repository, and {cwd} is not inside one",
                hint="run streamwarden from a clone of your repository",
            )
        return cls(Path(out.stdout.strip()))

    def git(self, *args: str, input_bytes: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", *args], cwd=self.top, input=input_bytes, capture_output=True, check=False)

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
        proc = self.git("grep", "-l", "-E", "-I", pattern, commit, "--", *(pathspecs or ["."]))
        if proc.returncode not in (0, 1):
            raise GitError(f"git grep failed: {proc.stderr.decode(errors='replace').strip()}")
        prefix = f"{commit}:"
        return [line[len(prefix) :] for line in proc.stdout.decode().splitlines() if line.startswith(prefix)]

    def ls_files(self, commit: str, pathspecs: list[str]) -> list[str]:
        proc = self.git("ls-tree", "-r", "--name-only", "-z", commit, "--", *pathspecs)
        if proc.returncode != 0:
            raise GitError(f"git ls-tree failed: {proc.stderr.decode(errors='replace').strip()}")
        return [p for p in proc.stdout.decode().split("\0") if p]

    def read_blobs(self, specs: list[str]) -> dict[str, bytes | None]:
        """``commit:path`` -> content (None when missing), all in one ``git cat-file --batch``."""
        if not specs:
            return {}
        proc = self.git("cat-file", "--batch", input_bytes=("\n".join(specs) + "\n").encode())
        if proc.returncode != 0:
            raise GitError(f"git cat-file failed: {proc.stderr.decode(errors='replace').strip()}")
        out: dict[str, bytes | None] = {}
        data = proc.stdout
        pos = 0
        for spec in specs:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].decode(errors="replace")
            pos = nl + 1
            if header.endswith("missing") or header.endswith("ambiguous"):
                out[spec] = None
                continue
            size = int(header.rsplit(" ", 1)[1])
            out[spec] = data[pos : pos + size]
            pos += size + 1
        return out

    def read(self, commit: str, path: str) -> bytes | None:
        return self.read_blobs([f"{commit}:{path}"])[f"{commit}:{path}"]

    def first_parent_history(self, commit: str, path: str, limit: int = 1000) -> list[tuple[str, str]]:
        """(commit, path at that commit) for every first-parent commit that changed the file, newest
        first, following renames."""
        out = self.text(
            "log",
            "--first-parent",
            "--follow",
            f"--max-count={limit}",
            "--format=%x00%H",
            "--name-only",
            commit,
            "--",
            path,
        )
        history: list[tuple[str, str]] = []
        for chunk in out.split("\0")[1:]:
            lines = [ln for ln in chunk.strip().splitlines() if ln.strip()]
            if len(lines) >= 2:
                history.append((lines[0].strip(), lines[-1].strip()))
        return history

    def relpath(self, path: Path) -> str:
        return path.resolve().relative_to(self.top.resolve()).as_posix()
