"""Errors the user can act on. Each becomes exit code 2 with a one-paragraph message, never a traceback."""

from __future__ import annotations

from streamwarden.core.escape import terminal
from streamwarden.core.exitcodes import UNUSABLE


class StreamwardenError(Exception):
    """An input the tool cannot use: names the file, the line or field path, and what to do."""

    exit_code = UNUSABLE

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.path = path
        self.hint = hint

    def where(self) -> str:
        """``file:line: path``, each part as a terminal shows it (escape.terminal: one line, no
        control character, no workflow command): a file name can carry anything."""
        loc = ""
        if self.file:
            loc = terminal(self.file)
            if self.line:
                loc += f":{self.line}"
        if self.path:
            loc = f"{loc}: {terminal(self.path)}" if loc else terminal(self.path)
        return loc

    def render(self) -> str:
        """The message for a terminal or a log (stderr, ``--format text``), every part escaped."""
        where = self.where()
        # a message of several lines keeps them, each escaped and indented under the first
        message = "\n  ".join(terminal(line) for line in self.message.split("\n"))
        text = f"{where}: {message}" if where else message
        if self.hint:
            text += f"\n  hint: {terminal(self.hint)}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "path": self.path,
            "hint": self.hint,
        }


class InputError(StreamwardenError):
    """A file (contract, config, deployment file) that cannot be read or is invalid."""


class PolicyError(StreamwardenError):
    """A policy that does not compile, or a custom policy that breaks the policy rules."""


class UsageError(StreamwardenError):
    """A bad flag or argument combination, an unknown pipeline."""


class SetupError(StreamwardenError):
    """The installation cannot do what the run asks: a configured source whose Python extra is missing."""


class ContractErrors(StreamwardenError):
    """Several validation errors at once (all of one file or of several files)."""

    def __init__(self, errors: list[StreamwardenError]) -> None:
        first = errors[0]
        super().__init__(first.message, file=first.file, line=first.line, path=first.path, hint=first.hint)
        self.errors = errors

    def render(self) -> str:
        return "\n".join(e.render() for e in self.errors)
