"""YAML for a contract that a program writes (``streamwarden init``): safe scalars and comments.

Every value may come from a file or a server that somebody else controls (a job name, a vertex
name, a column, a table property), so nothing is written raw: a string is written plain only when
it is a word YAML cannot read as anything else, otherwise double-quoted with every character
outside printable ASCII escaped (``\\n``, ``\\u2028``, ``\\U0001f600``); a comment is one line of
printable ASCII, escaped the same way. :func:`render` then parses its own output with the loader
that reads contracts and refuses to return text that does not read back as exactly the data it
was given: no value can break the document or add a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core.errors import StreamwardenError
from streamwarden.yamlsafe.read import join_index, join_key, parse_documents

_PLAIN = re.compile(r"(\.\.?/)*[A-Za-z_][A-Za-z0-9_./-]*|[0-9]+(ms|s|m|h|d|B|KiB|MiB|GiB|TiB)|TODO\([a-z_]+\)")
# words YAML 1.1 (PyYAML) reads as booleans or null
_RESERVED = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"}
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
NOTE_COLUMN = 44


@dataclass
class Draft:
    """A contract being written: the data (insertion-ordered) and its comments, by field path
    (``checkpoint.interval``, ``table.schema[3]``): ``notes`` go at the end of the field's line,
    ``intro`` lines open a mapping or list, ``before`` lines precede a field."""

    data: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    intro: dict[str, list[str]] = field(default_factory=dict)
    before: dict[str, list[str]] = field(default_factory=dict)
    block: set[str] = field(default_factory=set)  # list items written as a block mapping, not {a: b}

    def put(self, path: tuple[str, ...], value: Any, note: str | None = None) -> None:
        node = self.data
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
        if note:
            self.notes[dotted(path)] = note

    def get(self, path: tuple[str, ...]) -> Any:
        node: Any = self.data
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node


def dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out = join_index(out, part) if isinstance(part, int) else join_key(out, part)
    return out


def escape_text(text: str) -> str:
    """``text`` as printable ASCII: backslash escapes for the rest (YAML double-quoted syntax), and
    the ``[`` of a ``##[`` (a CI log's legacy workflow command, wherever the contract is printed)
    as ``\\x5b``."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch == "[" and len(out) >= 2 and out[-1] == out[-2] == "#":
            out.append("\\x5b")
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def comment(text: str) -> str:
    """One line of comment text: never a line break, never a control character."""
    return escape_text(text)


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
            return value
        return f'"{escape_text(value)}"'
    raise StreamwardenError(f"internal error: cannot write a {type(value).__name__} into a contract")


def _flat(item: Any) -> bool:
    return isinstance(item, dict) and all(not isinstance(v, (dict, list)) for v in item.values())


class _Writer:
    def __init__(self, draft: Draft) -> None:
        self.d = draft
        self.lines: list[str] = []

    def line(self, text: str, path: str | None = None) -> None:
        note = self.d.notes.get(path) if path is not None else None
        if note:
            text = f"{text.ljust(NOTE_COLUMN - 2)}  # {comment(note)}"
        self.lines.append(text)

    def comments(self, lines: list[str], pad: str) -> None:
        self.lines.extend(f"{pad}# {comment(c)}" if c else f"{pad}#" for c in lines)

    def mapping(self, node: dict[str, Any], path: str, pad: str) -> None:
        self.comments(self.d.intro.get(path, []), pad)
        for key, value in node.items():
            child = join_key(path, key)
            self.comments(self.d.before.get(child, []), pad)
            self.entry(f"{pad}{scalar(key)}:", value, child, pad)

    def entry(self, head: str, value: Any, path: str, pad: str) -> None:
        if isinstance(value, dict) and value:
            self.line(head, path)
            self.mapping(value, path, pad + "  ")
        elif isinstance(value, list) and value:
            self.line(head, path)
            self.sequence(value, path, pad + "  ")
        elif isinstance(value, (dict, list)):
            self.line(f"{head} {'{}' if isinstance(value, dict) else '[]'}", path)
        else:
            self.line(f"{head} {scalar(value)}", path)

    def sequence(self, items: list[Any], path: str, pad: str) -> None:
        self.comments(self.d.intro.get(path, []), pad)
        for index, item in enumerate(items):
            child = join_index(path, index)
            self.comments(self.d.before.get(child, []), pad)
            if _flat(item) and child not in self.d.block:
                pairs = ", ".join(f"{scalar(k)}: {scalar(v)}" for k, v in item.items())
                self.line(f"{pad}- {{{pairs}}}", child)
            elif isinstance(item, dict):
                start = len(self.lines)
                self.mapping(item, child, pad + "  ")
                first = self.lines[start]
                self.lines[start] = f"{pad}- {first[len(pad) + 2 :]}"
            else:
                self.line(f"{pad}- {scalar(item)}", child)


def render(draft: Draft, header: list[str]) -> str:
    """The contract's text: ``header`` comment lines, then the data with its comments. Raises when
    the text would not read back as exactly ``draft.data`` (it never should)."""
    w = _Writer(draft)
    w.comments(header, "")
    w.mapping(draft.data, "", "")
    text = "\n".join(w.lines) + "\n"
    docs = parse_documents(text, "streamwarden init")
    if len(docs) != 1 or docs[0].data != draft.data:
        raise StreamwardenError("internal error: the contract written does not read back as the values derived")
    return text
