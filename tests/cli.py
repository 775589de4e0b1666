"""The real CLI in a subprocess: the console script installed in this venv, as users run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

_SCRIPT = Path(sys.executable).parent / "streamwarden"


class Proc:
    """A finished ``streamwarden`` process: exit code, stdout, stderr."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        # decoded by hand: text mode would turn a "\r" into a newline and hide it from the tests
        self.code = proc.returncode
        self.stdout = proc.stdout.decode("utf-8", errors="replace")
        self.stderr = proc.stderr.decode("utf-8", errors="replace")

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self) -> Any:
        return json.loads(self.stdout)

    def __repr__(self) -> str:  # shown by pytest when an assertion on it fails
        return f"exit {self.code}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


def sw(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Proc:
    """Run ``streamwarden ARGS`` in ``cwd``; a traceback on either stream fails the test."""
    command = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "streamwarden.cli"]
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    proc = Proc(
        subprocess.run(
            [*command, *args],
            cwd=cwd,
            env=full_env,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    )
    assert "Traceback" not in proc.output, proc
    return proc
