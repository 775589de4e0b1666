"""The engine interface: policies in, rule-set results out. Engines never do I/O for policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from streamwarden.core.errors import InputError, PolicyError

# (package, rule set) -> the elements the set produced
RawResults = dict[tuple[str, str], list[Any]]


class Engine(ABC):
    name: str = "engine"

    @abstractmethod
    def evaluate(self, input_doc: dict[str, Any], packages: Sequence[str] | None = None) -> RawResults:
        """Evaluate the entrypoints (deny/warn/info) of every package, or only of ``packages``
        (e.g. the repository-level package for policy changes), against one input."""

    def evaluate_reading(
        self, input_doc: dict[str, Any], packages: Sequence[str] | None = None
    ) -> tuple[RawResults, frozenset[str] | None]:
        """:meth:`evaluate`, and the policy files (display names) whose time read sites
        (``PolicyFile.now_reads``) the evaluation may have run, for the result cache. None: this
        engine cannot tell what an evaluation ran (every file selected for the document that has
        a read site then counts as having read the time)."""
        return self.evaluate(input_doc, packages), None


class UndefinedDecision(PolicyError):
    """The engine gave no decision for the policies it was given: an OPA server that does not hold
    them (a replica the uploads never reached) answers every query undefined. Undefined is not
    empty: ``check`` stops with exit 2, and the gate denies (it fails closed)."""


def as_list(value: Any) -> list[Any]:
    """A rule set's value as a list: a set comes back as a list, an undefined one as None."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    return [value]


def subject(input_doc: dict[str, Any]) -> str:
    """The pipeline an input document is about, for a message."""
    for doc in (input_doc.get("contract"), (input_doc.get("base") or {}).get("contract")):
        name = ((doc or {}).get("metadata") or {}).get("name") if isinstance(doc, dict) else None
        if isinstance(name, str) and name:
            return f"pipeline {name!r}"
    return "the repository-level policies" if "repository" in input_doc else "the input"


def not_unicode(input_doc: dict[str, Any]) -> InputError:
    """A document with a string that is not valid Unicode: no engine can be given it (regorus
    refuses it; an OPA server would read it with U+FFFD in its place). Every engine says this."""
    where = _surrogate_path(input_doc, "input")
    at = f" (at {where})" if where else ""
    return InputError(
        f"{subject(input_doc)} has text that is not valid Unicode{at}: a lone surrogate, e.g. from a "
        "server's answer (a \\udcXX escape) or a name whose bytes are not UTF-8; it cannot be evaluated",
        hint="fix the text at its source (the server, the file or directory name), or check the pipeline "
        "without that source; names on disk are best renamed to UTF-8",
    )


def has_lone_surrogate(input_doc: dict[str, Any]) -> bool:
    """Whether a string of the document (a key or a value) is not valid Unicode."""
    return _surrogate_path(input_doc, "input") is not None


def _surrogate_path(value: Any, path: str) -> str | None:
    """Where the first string with a lone surrogate is (a key or a value), for the message."""
    if isinstance(value, str):
        return None if _encodes(value) else path
    if isinstance(value, dict):
        for k, v in value.items():
            key = str(k)
            if not _encodes(key):
                return f"{path}.{key!a}"
            found = _surrogate_path(v, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _surrogate_path(v, f"{path}[{i}]")
            if found:
                return found
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
