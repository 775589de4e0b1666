"""The engine interface: policies in, rule-set results out. Engines never do I/O for policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

# (package, rule set) -> the elements the set produced
RawResults = dict[tuple[str, str], list[Any]]


class Engine(ABC):
    name: str = "engine"

    @abstractmethod
    def evaluate(self, input_doc: dict[str, Any]) -> RawResults:
        """Evaluate every entrypoint (deny/warn/info of every package) against one input."""
