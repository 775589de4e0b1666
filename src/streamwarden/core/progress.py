"""A progress line on stderr for long runs.

- On a terminal (and not in CI): one line, redrawn in place, shown only once a run has taken more
  than a second, and erased when it ends.
- In CI or when stderr is not a terminal: nothing, unless ``--verbose``; then plain lines every
  ten seconds and one at the end.

Code that does the work reports through the module functions :func:`set_total`,
:func:`advance` and :func:`set_phase` (the line names the phase that runs: checking contracts,
then with ``--env`` one phase per live source of the gathering pipeline (facts/pipeline.py), each
with its own count), which cost nothing when no progress display is active (and never block: forked
workers get no display of their own).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import IO

OFF, TTY, PLAIN = "off", "tty", "plain"

_current: Progress | None = None


def choose_mode(verbose: bool, stream: IO[str] | None = None, environ: Mapping[str, str] | None = None) -> str:
    stream = stream if stream is not None else sys.stderr
    env = environ if environ is not None else os.environ
    in_ci = env.get("CI", "").lower() in ("true", "1", "yes") or env.get("GITHUB_ACTIONS") == "true"
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty and not in_ci:
        return TTY
    return PLAIN if verbose else OFF


class Progress:
    def __init__(
        self,
        label: str,
        mode: str,
        stream: IO[str] | None = None,
        *,
        delay: float = 1.0,
        interval: float | None = None,
        verbose: bool = False,
    ) -> None:
        self.label = label
        self.mode = mode
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval if interval is not None else (0.2 if mode == TTY else 10.0)
        self.verbose = verbose
        self.total: int | None = None
        self.done = 0
        self.started = time.monotonic()
        self._drawn = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- what the work reports --------------------------------------------------------
    def set_total(self, total: int) -> None:
        self.total = total

    def advance(self, n: int = 1) -> None:
        self.done += n

    def set_phase(self, label: str, total: int | None = None) -> None:
        """A new phase: its label, and a count of its own (the previous one is done)."""
        with self._lock:
            self.label = label
            self.total = total
            self.done = 0

    # -- display -----------------------------------------------------------------------
    def text(self) -> str:
        elapsed = time.monotonic() - self.started
        if self.total:
            count = f" {self.done}/{self.total}"
        elif self.done:
            count = f" {self.done} done"
        else:
            count = ""
        return f"streamwarden: {self.label}…{count} ({elapsed:.1f}s)"

    def _draw(self) -> None:
        with self._lock:
            try:
                if self.mode == TTY:
                    self.stream.write("\r\x1b[2K" + self.text())
                else:
                    self.stream.write(self.text() + "\n")
                self.stream.flush()
                self._drawn = True
            except (OSError, ValueError):  # a closed or broken stream never breaks a run
                self._stop.set()

    def _loop(self) -> None:
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            self._draw()
            if self._stop.wait(self.interval):
                return

    def start(self) -> Progress:
        global _current
        self.started = time.monotonic()
        _current = self
        if self.mode != OFF:
            self._thread = threading.Thread(target=self._loop, name="streamwarden-progress", daemon=True)
            self._thread.start()
        return self

    def finish(self, summary: str | None = None) -> None:
        global _current
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if _current is self:
            _current = None
        with self._lock:
            try:
                if self.mode == TTY and self._drawn:
                    self.stream.write("\r\x1b[2K")
                if summary and self.verbose:
                    self.stream.write(f"streamwarden: {summary}\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> Progress:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.finish()


def set_total(total: int) -> None:
    p = _current
    if p is not None:
        p.set_total(total)


def advance(n: int = 1) -> None:
    p = _current
    if p is not None:
        p.advance(n)


def set_phase(label: str, total: int | None = None) -> None:
    p = _current
    if p is not None:
        p.set_phase(label, total)


def _forget_in_child() -> None:
    global _current
    _current = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
