"""``SET 'key' = 'value';`` and ``RESET`` statements in Flink SQL scripts (no I/O).

Statements are split on ``;`` outside quotes; ``-- line`` and ``/* block */`` comments are
skipped wherever they are. Keys and values may be single-quoted (``''`` escapes a quote, the
Flink SQL client's form), double-quoted, back-quoted, or bare (the legacy ``SET key=value``).
``SET`` and ``RESET`` are case-insensitive. ``RESET 'key';`` drops the session value of one key,
``RESET;`` all of them. Every other statement (``CREATE``, ``INSERT``, ``EXECUTE STATEMENT SET``,
``SET;`` listing the session) is ignored. A ``SET`` that cannot be read is reported with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from streamwarden.secrets import scrub


@dataclass(frozen=True)
class SqlSetting:
    key: str | None  # None with reset=True: RESET of every key
    value: str | None
    line: int
    reset: bool = False


@dataclass(frozen=True)
class SqlProblem:
    line: int
    message: str


@dataclass(frozen=True)
class _Statement:
    text: str
    line: int


_TOKEN = r"""('(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|`(?:[^`]|``)*`|[^\s=;'"`]+)"""
_SET = re.compile(rf"^SET\s+{_TOKEN}\s*=\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL)
_SET_LEGACY_KEY = re.compile(r"^SET\s+([^\s=]+)\s*=\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL)
_RESET = re.compile(rf"^RESET(?:\s+{_TOKEN})?\s*$", re.IGNORECASE | re.DOTALL)
_BARE_SET = re.compile(r"^SET\s*$", re.IGNORECASE)
_SET_PREFIX = re.compile(r"^SET\b", re.IGNORECASE)
_RESET_PREFIX = re.compile(r"^RESET\b", re.IGNORECASE)


_LEXEME = re.compile(
    r"""--[^\n]*|/\*.*?(?:\*/|\Z)|'(?:[^']|'')*'?|"(?:[^"\\]|\\.)*"?|`(?:[^`]|``)*`?|;|[^;'"`/-]+|[/-]""",
    re.DOTALL,
)


def _split_statements(text: str) -> list[_Statement]:
    """Statements without comments, each with the line where its first word starts."""
    out: list[_Statement] = []
    buf: list[str] = []
    start: int | None = None
    line = 1
    for match in _LEXEME.finditer(text):
        lexeme = match.group()
        if lexeme == ";":
            if start is not None:
                out.append(_Statement("".join(buf).strip(), start))
            buf, start = [], None
            continue
        if lexeme.startswith("--") or lexeme.startswith("/*"):
            buf.append(" ")
        else:
            if start is None:
                stripped = lexeme.lstrip()
                if stripped:
                    start = line + lexeme[: len(lexeme) - len(stripped)].count("\n")
            buf.append(lexeme)
        line += lexeme.count("\n")
    if start is not None and "".join(buf).strip():
        out.append(_Statement("".join(buf).strip(), start))
    return out


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'`":
        q = token[0]
        return token[1:-1].replace(q + q, q)
    if len(token) >= 2 and token[0] == token[-1] == '"':
        return re.sub(r"\\(.)", r"\1", token[1:-1])
    return token


def parse_sql_settings(text: str) -> tuple[list[SqlSetting], list[SqlProblem]]:
    """Every SET / RESET in a SQL script, in order, and the SET statements that could not be read."""
    settings: list[SqlSetting] = []
    problems: list[SqlProblem] = []
    for stmt in _split_statements(text):
        body = stmt.text
        if _SET_PREFIX.match(body):
            if _BARE_SET.match(body):
                continue  # `SET;` lists the session configuration
            match = _SET.match(body)
            if match:
                value = match.group(2)
                if value[:1] in ("'", '"', "`"):
                    full = re.fullmatch(_TOKEN, value, re.DOTALL)
                    if not full:
                        message = f"cannot read the value of {_quoted(body, None)}: unbalanced quotes"
                        problems.append(SqlProblem(stmt.line, message))
                        continue
                    value = _unquote(value)
                settings.append(SqlSetting(_unquote(match.group(1)), value, stmt.line))
                continue
            legacy = _SET_LEGACY_KEY.match(body)
            if legacy:
                settings.append(SqlSetting(legacy.group(1), _unquote(legacy.group(2)), stmt.line))
                continue
            problems.append(SqlProblem(stmt.line, f"cannot read {_quoted(body)} as SET 'key' = 'value'"))
        elif _RESET_PREFIX.match(body):
            match = _RESET.match(body)
            if match:
                key = match.group(1)
                settings.append(SqlSetting(_unquote(key) if key else None, None, stmt.line, reset=True))
            else:
                problems.append(SqlProblem(stmt.line, f"cannot read {_quoted(body)} as RESET 'key'"))
    return settings, problems


def _quoted(text: str, limit: int | None = 80) -> str:
    """A statement quoted in a message: secrets masked first, then cut."""
    return repr(scrub(text, strict=True)[:limit])
