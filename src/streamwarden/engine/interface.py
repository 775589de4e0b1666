"""The engine interface: policies in, rule-set results out. Engines never do I/O for policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

# (package, rule set) -> the elements the set produced
RawResults = dict[tuple[str, str], list[Any]]


class Engine(ABC):
    name: str = "engine"

    @abstractmethod
    def evaluate(self, input_doc: dict[str, Any], packages: Sequence[str] | None = None) -> RawResults:
        """Evaluate the entrypoints (deny/warn/info) of every package, or only of ``packages``
        (e.g. the repository-level package for policy changes), against one input."""


def as_list(value: Any) -> list[Any]:
    """A rule set's value as a list: a set comes back as a list, an undefined one as None."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    return [value]
