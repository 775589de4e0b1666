"""A supervised worker process for code the tool does not trust to end: custom Rego policies.

``Sandbox(handler, memory_bytes)`` forks once; the child inherits everything already compiled
(the regorus engine, the policy set), lowers its address-space limit (RLIMIT_AS) to what it
uses now plus ``memory_bytes``, and serves requests: bytes in, ``handler(bytes)`` out, over two
pipes. The parent waits for each answer at most ``timeout`` seconds (the watchdog is the parent's
own poll: no thread, no signal); past it the child is killed. A child that dies (an engine crash,
an allocation refused by the limit) is reported as a :class:`SandboxFailure` saying which.

One child serves a whole run (per process: a fork worker of a large run gets its own), so a
request costs two pipe writes, not a process. The child's stderr goes to a file the parent copies
to its own stderr after each answer (a policy's ``print`` output is kept, scrubbed and escaped as
any contract text) and reads after a death
(Rust's "memory allocation of N bytes failed" says the limit was hit). A shared word, ``mark``,
lets the child say what it is evaluating, so the parent can name the policy that never answered.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import select
import signal
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

_HEADER = struct.Struct(">Q")
_MARK = struct.Struct("<q")
_MEMORY_EXIT = 71  # the child's exit status after a MemoryError it could not answer
_MEMORY_WORDS = (b"memory allocation of", b"out of memory", b"MemoryError", b"Cannot allocate memory")


def available() -> bool:
    """fork, and the resource module (POSIX): elsewhere policies are evaluated in-process, unbounded."""
    try:
        import resource  # noqa: F401
    except ImportError:  # pragma: no cover - not POSIX
        return False
    return hasattr(os, "fork")


class SandboxFailure(Exception):
    """The child did not answer: ``kind`` is ``time``, ``memory`` or ``crash`` (``detail`` says how)."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind
        self.detail = detail


class RemoteError(Exception):
    """The handler raised in the child: ``info`` is what ``encode_error`` made of it."""

    def __init__(self, info: dict[str, Any]) -> None:
        super().__init__(str(info.get("message")))
        self.info = info


Handler = Callable[[bytes], bytes]

_SERVING: Sandbox | None = None  # in a sandbox child: the sandbox it serves


def serving() -> Sandbox | None:
    """In a sandbox child, its sandbox (``set_mark`` goes there); None in every other process."""
    return _SERVING


class Sandbox:
    def __init__(self, handler: Handler, memory_bytes: int) -> None:
        self.owner = os.getpid()
        self.dead = False
        self._status: int | None = None
        self._mark = mmap.mmap(-1, _MARK.size)  # MAP_SHARED | MAP_ANONYMOUS: the child's writes are seen here
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the sandbox
        self._shown = 0
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child (coverage does not follow a fork)
            code = 70
            try:
                os.close(req_w)
                os.close(resp_r)
                self._child_setup(memory_bytes)
                self._serve(handler, req_r, resp_w)
                code = 0
            except MemoryError:
                code = _MEMORY_EXIT
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        os.close(req_r)
        os.close(resp_w)
        self.pid = pid
        self._req = req_w
        self._resp = resp_r

    # -- child side --------------------------------------------------------------------------

    def _child_setup(self, memory_bytes: int) -> None:  # pragma: no cover - child
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _die_with_parent(self.owner)
        os.dup2(self._stderr.fileno(), 2)
        import resource

        limit = _address_space() + memory_bytes
        try:
            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if hard != resource.RLIM_INFINITY:
                limit = min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        except (ValueError, OSError):  # a platform that refuses: the time limit still holds
            pass

    def set_mark(self, value: int) -> None:
        """Child side: what is being evaluated now (read by the parent when the child fails)."""
        _MARK.pack_into(self._mark, 0, value)

    def _serve(self, handler: Handler, rfd: int, wfd: int) -> None:  # pragma: no cover - child
        global _SERVING
        _SERVING = self
        while True:
            request = _read_frame(rfd, None)
            if request is None:
                return  # the parent closed the pipe: the run is over
            self.set_mark(0)
            try:
                answer = b"\x00" + handler(request)
            except MemoryError:
                answer = b"\x02"
            except Exception as exc:
                answer = b"\x01" + json.dumps(encode_error(exc)).encode()
            _write_frame(wfd, answer)

    # -- parent side -------------------------------------------------------------------------

    @property
    def mark(self) -> int:
        value: int = _MARK.unpack_from(self._mark, 0)[0]
        return value

    def call(self, request: bytes, timeout: float) -> bytes:
        """The handler's answer to ``request``; SandboxFailure when it takes longer than ``timeout``
        seconds or the child dies, RemoteError when the handler raised."""
        if self.dead:
            raise SandboxFailure("crash", "the policy worker is gone")
        deadline = time.monotonic() + timeout
        try:
            _write_frame(self._req, request)
            answer = _read_frame(self._resp, deadline)
        except TimeoutError:
            self._kill()
            raise SandboxFailure("time") from None
        except OSError:  # EPIPE: the child died before reading
            answer = None
        if answer is None:
            raise self._death() from None
        self._forward_stderr()
        if answer[:1] == b"\x00":
            return answer[1:]
        if answer[:1] == b"\x02":
            self.close()
            raise SandboxFailure("memory", "MemoryError")
        raise RemoteError(json.loads(answer[1:]))

    def _forward_stderr(self) -> None:
        """What the child wrote on stderr (a policy's print) shows on ours, as any text from a
        contract does: a print may carry the input's strings (a pull request's), so it is scrubbed
        of secrets and its control characters and workflow commands are defused. The child has
        answered: what it printed for this request is whole."""
        size = os.fstat(self._stderr.fileno()).st_size
        if size > self._shown:
            from streamwarden.core.escape import log_text
            from streamwarden.core.secrets import scrub

            data = os.pread(self._stderr.fileno(), size - self._shown, self._shown)
            self._shown = size
            sys.stderr.write(log_text(scrub(data.decode("utf-8", "replace"))))
            sys.stderr.flush()

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self.close()

    def _death(self) -> SandboxFailure:
        status = self._reap()
        size = os.fstat(self._stderr.fileno()).st_size
        tail = os.pread(self._stderr.fileno(), 4096, max(0, size - 4096)) if size else b""
        self._shown = size
        self.dead = True
        memory = any(w in tail for w in _MEMORY_WORDS)
        if status is not None and os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            if memory:
                return SandboxFailure("memory", name)
            if sig == signal.SIGSEGV or b"overflowed its stack" in tail:
                return SandboxFailure("crash", f"{name}, a stack overflow: unbounded recursion?")
            if sig == signal.SIGKILL:
                return SandboxFailure("crash", f"{name}: killed from outside, out of memory?")
            return SandboxFailure("crash", name)
        code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
        if memory or code == _MEMORY_EXIT:
            return SandboxFailure("memory", "")
        return SandboxFailure("crash", f"exit status {code}" if code is not None else "")

    def _reap(self) -> int | None:
        """Close the pipes and wait for the child (it exits on EOF, or is already gone)."""
        if self.dead:
            return self._status
        for fd in (self._req, self._resp):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._req = self._resp = -1
        status: int | None = None
        if os.getpid() == self.owner:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                status = None
        self._status = status
        self.dead = True
        return status

    def close(self) -> None:
        if not self.dead:
            self._reap()
        self.dead = True


def encode_error(exc: BaseException) -> dict[str, Any]:
    from streamwarden.core.errors import StreamwardenError

    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, StreamwardenError):
        info.update(exc.to_dict())
    return info


def _address_space() -> int:  # pragma: no cover - child
    """The process's virtual size now (the limit is counted on top of it)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _die_with_parent(parent: int) -> None:  # pragma: no cover - child, Linux only
    """PR_SET_PDEATHSIG: a child whose parent is killed (a fork worker of an aborted run) dies too,
    instead of evaluating a runaway policy forever."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(0)


def _write_frame(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_frame(fd: int, deadline: float | None) -> bytes | None:
    """One length-prefixed message; None at EOF; TimeoutError past ``deadline`` (monotonic)."""
    head = _read_exact(fd, _HEADER.size, deadline)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    return _read_exact(fd, size, deadline)


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes | None:
    chunks: list[bytes] = []
    left = size
    poller = select.poll() if deadline is not None else None
    if poller is not None:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while left:
        if poller is not None and deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not poller.poll(wait * 1000):
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
