"""What a parsed YAML file is, with no parser: the limits every YAML read applies, the field paths
of its line marks (``join_key`` / ``join_index``) and :class:`YamlDocument`. Shared by the reading
side (:mod:`streamwarden.yamlsafe.read`) and the parse (:mod:`streamwarden.yamlsafe.parse`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_NODES = 2_000_000

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_\-]+$")
_PLAIN: dict[str, bool] = {}  # key -> whether it is written plain in a path (a run sees few keys)


def join_key(parent: str, key: str) -> str:
    plain = _PLAIN.get(key)
    if plain is None:
        plain = _PLAIN_KEY.match(key) is not None
        if len(key) <= 128:
            if len(_PLAIN) >= 8192:
                _PLAIN.clear()
            _PLAIN[key] = plain
    if plain:
        return f"{parent}.{key}" if parent else key
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{parent}["{escaped}"]'


def join_index(parent: str, index: int) -> str:
    return f"{parent}[{index}]"


def parent_paths(path: str) -> list[str]:
    """``a.b[1].c`` -> [``a.b[1].c``, ``a.b[1]``, ``a.b``, ``a``, ``""``]."""
    out = [path]
    p = path
    while p:
        cut = max(p.rfind("."), p.rfind("["))
        p = "" if cut <= 0 else p[:cut]
        out.append(p)
    return out


class YamlSet(tuple):  # type: ignore[type-arg]
    """A ``!!set`` of the YAML 1.2 core schema (snakeyaml-engine builds a Java ``Set``): its members."""

    __slots__ = ()


@dataclass
class YamlDocument:
    data: Any
    file: str
    marks: dict[str, int] = field(default_factory=dict)
    index: int = 0  # the document's position in a multi-document file
    start_line: int = 1
    # field path -> the text of a scalar that is not a string (a number, boolean, null...) as the
    # file writes it: ``010``, ``0x10``, ``on`` (readers that read the text, not the YAML value)
    written: dict[str, str] = field(default_factory=dict)
    # YAML 1.2 core schema only (``schema="core"``): what snakeyaml-engine, as Flink 2.x's loader
    # configures it, refuses in this document, as (line, reason); and where a plain ``<<`` key
    # stands, which a YAML 1.1 reader would merge and a YAML 1.2 one reads as a key: (path, line)
    refusals: list[tuple[int, str]] = field(default_factory=list)
    merge_keys: list[tuple[str, int]] = field(default_factory=list)

    def line_of(self, path: str) -> int:
        """The line of ``path``, or of its nearest parent that exists (a missing field)."""
        for p in parent_paths(path):
            if p in self.marks:
                return self.marks[p]
        return self.start_line
