"""Escaping per destination: text that came from a contract, a file name, a server or a savepoint
must never act as a command, markup or a terminal control where streamwarden prints it.

- A CI log line (GitHub Actions): a line that starts with ``::`` after whitespace is a workflow
  command, and ``##[`` anywhere in a line is its legacy form. Both are broken with a zero-width
  space, which reads the same.
- A terminal: control characters (``\\r``, NUL, ESC and so ANSI/OSC sequences, the other C0 and C1
  controls, bidirectional overrides) are shown as ``\\r``, ``\\x1b``, ``\\u202e``..., never
  written raw; the text report's own colours (SGR sequences added after escaping, kept by
  ``log_text(..., colours=True)``) are the only ESC bytes.
- JSON (``--format json``, SARIF, ``facts``): ``json.dumps`` escapes C0 controls; DEL, C1 and
  ``##[`` are written as ``\\u`` escapes too, so the parsed value is unchanged.
- XML (JUnit): character references for ``\\r``, DEL/C1, a line-leading ``::`` and ``##[``.
- Markdown (the pull-request comment, the job summary, the gate, review, evidence and rule catalog
  documents): :func:`cell` for free text, :func:`code` for a code span, :func:`code_block` for a
  fenced block; no HTML, no links, no @-mentions. :func:`doc_cell` only for our own Markdown (the
  contract reference generated from the shipped schema).
- Mermaid (the checkpoint ↔ snapshot timeline in the Markdown of ``gate`` and ``evidence``):
  :func:`mermaid_label` for every node and edge label; node ids are our own.
- A GitHub annotation (``--format github``): :func:`annotation_data` / :func:`annotation_property`,
  the runner's own escapes for ``%``, ``\\r``, ``\\n`` (and ``:``, ``,`` in properties).
- A file name, before any of these: :func:`shown_name` (valid Unicode, a byte that is not UTF-8
  written as ``\\xNN``).
"""

from __future__ import annotations

import re

ZWSP = "\u200b"  # zero-width space: breaks a command or a link, reads the same

# C0 (but \n and \t), DEL, C1, line/paragraph separators, bidirectional embeddings and isolates
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# the same without CR: an annotation carries CR and LF in the runner's own escapes
_CONTROL_NO_CR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_NL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\n": "\\n", "\x00": "\\0", "\x1b": "\\x1b"}
# a line that starts (after whitespace) with "::": a workflow command for the Actions runner
_COMMAND_LINE = re.compile(r"^(\s*)(?=::)", re.MULTILINE)
_LEGACY = "##["
# our own colours: SGR sequences only (click.style)
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _visible(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def _commands(text: str) -> str:
    """Workflow commands broken: a line-leading ``::`` and ``##[`` anywhere."""
    text = _COMMAND_LINE.sub(lambda m: m.group(1) + ZWSP, text)
    return text.replace(_LEGACY, "##" + ZWSP + "[")


def terminal(value: object) -> str:
    """One value on one line of a terminal or CI log: control characters (newlines too) shown
    escaped, workflow commands broken. For every contract, file, server or savepoint string."""
    text = _CONTROL_NL.sub(lambda m: _visible(m.group()), str(value))
    return _commands(text)


def log_text(text: str, colours: bool = False) -> str:
    """Whole text bound for a terminal or log (a report, a stderr message): newlines kept, every
    other control character shown escaped, workflow commands broken. ``colours``: the text report's
    own SGR sequences are kept; only a renderer that escaped every value before colouring it (so
    that each ESC left is its own) may ask for that."""
    if not colours:
        return _commands(_CONTROL.sub(lambda c: _visible(c.group()), text))
    parts = []
    last = 0
    for m in _SGR.finditer(text):
        parts.append(_CONTROL.sub(lambda c: _visible(c.group()), text[last : m.start()]))
        parts.append(m.group())
        last = m.end()
    parts.append(_CONTROL.sub(lambda c: _visible(c.group()), text[last:]))
    return _commands("".join(parts))


def json_text(text: str) -> str:
    """Serialized JSON made safe for a log: DEL, C1, separators and ``##[`` as ``\\u`` escapes
    (inside strings, the only place they can occur; the parsed document is unchanged)."""
    text = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.replace(_LEGACY, "##\\u005b")


def xml_text(text: str) -> str:
    """Serialized XML made safe for a log: character references (the parsed document is unchanged)."""
    text = _CONTROL.sub(lambda m: f"&#{ord(m.group())};", text)
    text = re.sub(r"^(\s*)::", lambda m: m.group(1) + "&#58;:", text, flags=re.MULTILINE)
    return text.replace(_LEGACY, "##&#91;")


# --- GitHub workflow commands -------------------------------------------------------------------


def annotation_data(text: str) -> str:
    """An annotation's message, escaped as the Actions runner unescapes it (``%``, CR, LF), other
    control characters shown escaped and ``##[`` broken (the runner looks for it anywhere)."""
    text = _CONTROL_NO_CR.sub(lambda m: _visible(m.group()), text)
    text = text.replace(_LEGACY, "##" + ZWSP + "[")
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation_property(text: str) -> str:
    """An annotation property (file, line, title): the data escapes, plus ``:`` and ``,``."""
    return annotation_data(text).replace(":", "%3A").replace(",", "%2C")


# --- Markdown (GitHub-flavoured) ------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|])")
# what GitHub turns into a link by itself: a scheme (http://, mailto:, ...) and www.
# (only these: a zero-width space in s3:// would only spoil a copied path)
_AUTOLINK = re.compile(r"(?i)(?<![a-z0-9])(www|https?|ftp|mailto|xmpp)(\.|:)")


def _no_autolinks(text: str) -> str:
    return _AUTOLINK.sub(lambda m: m.group(1) + ZWSP + m.group(2), text)


def _plain(value: object) -> str:
    """One line, control characters shown escaped (newlines and tabs become spaces)."""
    s = " ".join(str(value).split())
    return _CONTROL.sub(lambda m: _visible(m.group()), s)


def cell(text: object) -> str:
    """Free text in Markdown (a table cell, a heading): one line, HTML-escaped, Markdown specials,
    bare links and @-mentions defused, workflow commands broken."""
    s = _html_escape(_plain(text))
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = _no_autolinks(s)
    return _commands(s.replace("@", "@" + ZWSP))


def code(text: object) -> str:
    """An inline code span that survives backticks and table pipes in the value (GitHub links
    nothing inside a code span)."""
    s = _commands(_plain(text)).replace("|", "\\|")
    if not s:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or longest else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def code_block(text: object, info: str = "") -> str:
    """A fenced code block (a command to copy, a rule's example): the text as written, whose fence
    no line of it can close (one backtick more than its longest run), every line as a log shows it
    (:func:`log_text`). ``info`` is our own (``yaml``), never a value."""
    s = log_text(str(text))
    longest = max((len(m) for m in re.findall(r"`{3,}", s)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{info}\n{s}\n{fence}"


def doc_cell(text: object) -> str:
    """Markdown we wrote ourselves (the shipped schema's descriptions, with their links and code
    spans) in a table cell: one line, pipes escaped. Never for a value from a contract, a policy,
    a file or a server: that is :func:`cell`."""
    return _plain(text).replace("|", "\\|").strip()


# --- Mermaid (diagrams in the Markdown of gate and evidence) -------------------------------------

# Inside a quoted Mermaid label, "#name;" / "#123;" are entity codes and a quote ends the label;
# brackets, braces, parentheses, pipes and backticks would start shapes, edge labels or Markdown
# strings once a quote is broken. Each becomes a numeric entity code, "#" first of all (so a value
# that already holds "#quot;" shows as written); newlines and controls are already gone.
_MERMAID = re.compile(r"[#\"&<>\[\](){}|`]")
MERMAID_PART_CAP = 120


def mermaid_label(*lines: object) -> str:
    """A quoted Mermaid node or edge label, one escaped line per argument (joined with ``<br/>``):
    each line on one line (controls shown escaped), at most 120 characters, and every character
    that could end the quotes, open a shape or start an entity written as ``#<code>;``."""
    from streamwarden.core.secrets import scrub

    parts = []
    for line in lines:
        s = _plain(scrub(str(line)))  # scrubbed before the cut: a cut could split a credential
        if len(s) > MERMAID_PART_CAP:
            s = s[: MERMAID_PART_CAP - 1] + "…"
        parts.append(_MERMAID.sub(lambda m: f"#{ord(m.group())};", s))
    return '"' + "<br/>".join(parts) + '"'


def _html_escape(s: str) -> str:
    """``html.escape(s, quote=False)``, without importing ``html`` (and its entity tables) in every run."""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def shown_name(name: str) -> str:
    """A file name as shown to the user: valid Unicode. On POSIX a name's bytes that are not UTF-8
    come from the OS as lone surrogates (``surrogateescape``: byte 0xff is ``"\\udcff"``), which
    no JSON, SARIF or policy input may carry; each such byte is shown as ``\\xNN``. Only the shown
    string changes: the file is read by its real path."""
    if name.isascii():
        return name
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return name
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no OS name decodes to (a YAML "\ud800" escape)
        return name.encode("utf-8", "backslashreplace").decode("utf-8")
