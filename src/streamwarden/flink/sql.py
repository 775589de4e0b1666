"""Flink SQL scripts read in statement order (no I/O): ``SET``, ``RESET`` and the jobs.

Statements are split on ``;`` outside quotes; ``-- line`` and ``/* block */`` comments are
skipped wherever they are. Keys and values may be single-quoted (``''`` escapes a quote, the
Flink SQL client's form), double-quoted, back-quoted, or bare (the legacy ``SET key=value``).
``SET`` and ``RESET`` are case-insensitive. ``RESET 'key';`` drops the session value of one key,
``RESET;`` all of them. A ``SET`` that cannot be read is reported with its line.

In Flink's SQL client (and in a program that runs a script statement by statement) a ``SET``
changes the session, so it applies to the statements after it only. The statements that submit a
job are therefore kept, in order, with the SET statements: ``INSERT INTO`` / ``INSERT OVERWRITE`` (also
as ``EXECUTE INSERT``), a statement set (``BEGIN STATEMENT SET; ... END;`` or
``EXECUTE STATEMENT SET BEGIN ... END;``: one job, submitted at its ``END``), ``EXECUTE PLAN`` /
``COMPILE AND EXECUTE PLAN``, ``CREATE TABLE ... AS SELECT`` / ``[CREATE OR] REPLACE TABLE ... AS``,
and a query (``SELECT``, ``WITH``). Every other statement (``CREATE``, ``USE``, ``SET;`` listing
the session, ...) changes no setting and runs no job. A ``SET`` inside a statement set is refused
by Flink (only ``INSERT`` is allowed there), and a statement set without ``END`` is never
submitted: both are reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from streamwarden.core.secrets import scrub


@dataclass(frozen=True)
class SqlSetting:
    key: str | None  # None with reset=True: RESET of every key
    value: str | None
    line: int
    reset: bool = False
    order: int = 0  # the statement's position in the script (0 first)


@dataclass(frozen=True)
class SqlJob:
    """A statement that submits a job: it sees the SETs of the statements before ``order``."""

    line: int
    kind: str  # insert, statement-set, plan, create-table-as, query
    order: int


@dataclass(frozen=True)
class SqlProblem:
    line: int
    message: str
    code: str = "unreadable-statement"
    severity: str = "warning"


@dataclass
class SqlScript:
    settings: list[SqlSetting] = field(default_factory=list)
    jobs: list[SqlJob] = field(default_factory=list)
    problems: list[SqlProblem] = field(default_factory=list)


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
_BEGIN_SET = re.compile(r"^BEGIN\s+STATEMENT\s+SET\s*$", re.IGNORECASE)
_EXECUTE_SET = re.compile(r"^EXECUTE\s+STATEMENT\s+SET\s+BEGIN\b", re.IGNORECASE)
_END = re.compile(r"^END\s*$", re.IGNORECASE)
_INSERT = re.compile(r"^(?:EXECUTE\s+)?INSERT\s+(?:INTO|OVERWRITE)\b", re.IGNORECASE)
_PLAN = re.compile(r"^(?:COMPILE\s+AND\s+)?EXECUTE\s+PLAN\b", re.IGNORECASE)
_TABLE = re.compile(r"^(?:CREATE\s+OR\s+REPLACE|CREATE|REPLACE)\s+(?:TEMPORARY\s+)?TABLE\b", re.IGNORECASE)
_QUERY = re.compile(r"^\(*\s*(?:SELECT|WITH)\b", re.IGNORECASE)
# a word, a quoted string or identifier, or one parenthesis: enough to find a top-level AS
_WORDS = re.compile(r"""'(?:[^']|'')*'?|"(?:[^"\\]|\\.)*"?|`(?:[^`]|``)*`?|[()]|[A-Za-z_]+""")


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


def _as_select(body: str) -> bool:
    """``CREATE TABLE t ... AS SELECT``: an ``AS`` outside parentheses (a computed column or a
    watermark's ``AS`` is inside the column list)."""
    depth = 0
    for match in _WORDS.finditer(body):
        word = match.group()
        if word == "(":
            depth += 1
        elif word == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and word.upper() == "AS":
            return True
    return False


def _job_kind(body: str) -> str | None:
    if _INSERT.match(body):
        return "insert"
    if _PLAN.match(body):
        return "plan"
    if _TABLE.match(body) and _as_select(body):
        return "create-table-as"
    if _QUERY.match(body):
        return "query"
    return None


def _setting(body: str, line: int, order: int, problems: list[SqlProblem]) -> SqlSetting | None:
    """A SET or RESET statement, or None (reported in ``problems`` when it cannot be read)."""
    if _SET_PREFIX.match(body):
        if _BARE_SET.match(body):
            return None  # `SET;` lists the session configuration
        match = _SET.match(body)
        if match:
            value = match.group(2)
            if value[:1] in ("'", '"', "`"):
                full = re.fullmatch(_TOKEN, value, re.DOTALL)
                if not full:
                    problems.append(
                        SqlProblem(line, f"cannot read the value of {_quoted(body, None)}: unbalanced quotes")
                    )
                    return None
                value = _unquote(value)
            return SqlSetting(_unquote(match.group(1)), value, line, order=order)
        legacy = _SET_LEGACY_KEY.match(body)
        if legacy:
            return SqlSetting(legacy.group(1), _unquote(legacy.group(2)), line, order=order)
        problems.append(SqlProblem(line, f"cannot read {_quoted(body)} as SET 'key' = 'value'"))
        return None
    match = _RESET.match(body)
    if match:
        key = match.group(1)
        return SqlSetting(_unquote(key) if key else None, None, line, reset=True, order=order)
    problems.append(SqlProblem(line, f"cannot read {_quoted(body)} as RESET 'key'"))
    return None


def parse_sql(text: str) -> SqlScript:
    """Every SET / RESET and every statement that submits a job, in statement order, and the
    statements that could not be read."""
    script = SqlScript()
    open_set: _Statement | None = None  # the BEGIN of a statement set not ended yet
    for order, stmt in enumerate(_split_statements(text)):
        body = stmt.text
        is_setting = bool(_SET_PREFIX.match(body) or _RESET_PREFIX.match(body))
        if open_set is not None:
            if _END.match(body):
                script.jobs.append(SqlJob(open_set.line, "statement-set", order))
                open_set = None
            elif is_setting:
                script.problems.append(
                    SqlProblem(
                        stmt.line,
                        f"{body.split(None, 1)[0].upper()} inside the statement set opened at line {open_set.line}: "
                        "Flink allows only INSERT statements between BEGIN and END and refuses the script; "
                        "move it before the statement set",
                        "set-in-statement-set",
                        "error",
                    )
                )
            continue
        if _BEGIN_SET.match(body) or _EXECUTE_SET.match(body):
            open_set = stmt
            continue
        if is_setting:
            setting = _setting(body, stmt.line, order, script.problems)
            if setting is not None:
                script.settings.append(setting)
            continue
        kind = _job_kind(body)
        if kind is not None:
            script.jobs.append(SqlJob(stmt.line, kind, order))
    if open_set is not None:
        script.problems.append(
            SqlProblem(
                open_set.line,
                f"the statement set opened at line {open_set.line} has no END: Flink never submits it",
                "unclosed-statement-set",
            )
        )
    return script


def parse_sql_settings(text: str) -> tuple[list[SqlSetting], list[SqlProblem]]:
    """Every SET / RESET in a SQL script, in order, and the statements that could not be read."""
    script = parse_sql(text)
    return script.settings, script.problems


def _quoted(text: str, limit: int | None = 80) -> str:
    """A statement quoted in a message: secrets masked first, then cut."""
    return repr(scrub(text, strict=True)[:limit])
