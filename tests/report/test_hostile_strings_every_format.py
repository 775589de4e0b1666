"""Every document streamwarden writes, in every format, shows a hostile string as text and nothing
else: a Markdown link, a team @-mention, raw HTML (``</details>`` included), backticks that would
end a code span, a newline that would start a line of its own, an ANSI or OSC escape, a GitHub
workflow command (``::error::`` at a line start, ``##[`` anywhere).

The strings get in where a user's text gets in: a contract's consumer names, waiver reasons and
approvers (contract text refuses control characters, newlines aside), a contract's file name, a
custom policy's finding message and METADATA (a custom Rego package can emit any string; it emits
25 findings in the contract's file, so a check report lists 20 and one that counts the rest, in a
message that names the file), and a
savepoint's operator uids and directory (written by the job, read back from ``_metadata``). Each
document goes through the real CLI: ``check`` in its six formats, ``diff``, ``gate``, ``evidence``,
``savepoint inspect`` and ``policy doc``.

Per format: Markdown, rendered by a CommonMark parser, holds no link, image or raw HTML of ours
but our own, no @-mention or bare URL outside code, and the hostile line reads back whole; a log
(text, github, and every format's raw bytes) holds no ESC or other control byte and no line that
starts with ``::`` but our own annotations; JSON and SARIF parse and give the strings back exactly;
JUnit XML parses and gives the message back.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import yaml
from markdown_it import MarkdownIt
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo
from tests.recovery_repo import SINK_UID, RecoveryRepo
from tests.savepoint_files import keyed_operator, orders_job

ZWSP = "\u200b"
LINK = "[docs](https://evil.example/x)"
MENTION = "@org/admins"
HTML = "<img src=x onerror=alert(1)></details><details open><summary>"
TICKS = "a`b ``` c``"  # a backtick first: a code span it ends early leaves the link and the HTML as prose
COMMAND = "::error::pwned ##[error]x"
# one line of everything but control characters: a consumer name, a METADATA title
LINE = f"{TICKS} {LINK} {MENTION} {HTML} {COMMAND}"
# free contract text may span lines: the second one would be a workflow command in a log
REASON = f"{LINE}\n{COMMAND}\n  ::warning::indented"
# what contract text refuses but a file, a server or a policy carries: ESC (colour, OSC 8 link), BEL, CR
CONTROLS = "\x1b[31mred\x1b]8;;https://evil.example\x07osc\x1b]8;;\x07\r::warning::cr\x9b2J"
MESSAGE = f"{LINE} {CONTROLS}\n{COMMAND}"
# a file or directory name: everything but "/" (a relative link, a user mention)
NAME_CONTROLS = (
    "a`b [docs](evil.example) <img src=x onerror=alert(1)> @admins \x1b[31mred\x1b]8;;x\x07\r\n::error::f ##[error]f"
)
FILE_NAME = f"orders{NAME_CONTROLS}.yaml"
UID = f"dedup{CONTROLS}\n::error::uid"

CONTROL_BYTES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OUR_ANNOTATION = re.compile(r"::(error|warning|notice)( [^:\n]*)?::")
# the HTML our own Markdown writes (collapsible sections, the footer, Mermaid line breaks)
OUR_HTML = re.compile(r"^\s*(</?details>|<summary>.*</summary>|</?sub>|<br/?>|<!-- streamwarden -->)\s*$", re.S)
# what XML 1.0 cannot carry at all, even as a character reference: JUnit writes U+FFFD instead
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")

POLICY = """package acme.hostile

import rego.v1

# METADATA
# title: {title}
# description: {description}
# custom:
#   id: ACME-001
#   severity: error
#   remediation: {description}
#   example: {example}
deny contains f if {{
\tinput.contract.metadata.name
\tsome i in numbers.range(1, 25)
\tf := {{"rule": "ACME-001", "message": {message}, "path": sprintf("metadata.name%d", [i])}}
}}
"""


def _policy() -> str:
    q = json.dumps  # a JSON string is a YAML double-quoted scalar and a Rego string
    return POLICY.format(
        title=q(LINE),
        description=q(f"{LINE} {CONTROLS}"),
        example=q(f"```\n{LINK} {HTML}\n{COMMAND}\n\x1b[2J</details>"),
        message=q(MESSAGE),
    )


def hostile_contract(reason: str = REASON) -> str:
    c = CLEAN_CONTRACT.replace("- name: finance-dashboard", f"- name: {json.dumps(LINE)}")
    c = c.replace("freshness: 30m", "freshness: 1m")  # SW-TABLE-006 names the consumer in a finding
    c = c.replace("storage: s3://lake-checkpoints/orders-enrichment", "storage: file:///tmp/ckpt")  # waived
    c = c.replace('contact: "#finance-data"', f"contact: {json.dumps(LINE)}")
    return c + (
        f"waivers:\n  - rule: SW-CKPT-004\n    reason: {json.dumps(reason)}\n"
        f"    expires: 2027-01-01\n    approved_by: {json.dumps(LINE)}\n"
    )


def _write_policy(root: Path) -> None:
    (root / "pol").mkdir(exist_ok=True)
    (root / "pol" / "hostile.rego").write_text(_policy(), encoding="utf-8")


# --- what each format must (not) hold ------------------------------------------------------------


def assert_log_safe(text: str, *, what: str, annotations: bool = False) -> None:
    """A CI log or a terminal: no control byte but newline and tab, no workflow command."""
    bad = CONTROL_BYTES.findall(text)
    assert not bad, f"{what}: control characters {bad!r}"
    assert "##[" not in text, what
    for line in text.split("\n"):
        if line.lstrip().startswith("::"):
            assert annotations and OUR_ANNOTATION.match(line), f"{what}: workflow command line {line!r}"


def _walk(doc: Any) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            yield from _walk(k)
            yield from _walk(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v)


def assert_json_round_trips(text: str, *expected: str, what: str) -> Any:
    assert_log_safe(text, what=what)
    doc = json.loads(text)
    strings = list(_walk(doc))
    for value in expected:
        assert any(value in s for s in strings), f"{what}: {value!r} not given back"
    return doc


_MD = MarkdownIt("commonmark").enable("table")


def _html_tokens(tokens: list[Any]) -> Iterator[Any]:
    for t in tokens:
        if t.type in ("html_inline", "html_block"):
            yield t
        if t.children:
            yield from _html_tokens(t.children)


def _link_tokens(tokens: list[Any]) -> Iterator[Any]:
    for t in tokens:
        if t.type in ("link_open", "image"):
            yield t
        if t.children:
            yield from _link_tokens(t.children)


def assert_markdown_inert(md: str, *, what: str, shows: str = LINE) -> None:
    """Markdown as GitHub reads it: no link, image or foreign HTML, no mention or bare URL in
    prose, our own <details> still balanced, and ``shows`` reads back whole somewhere."""
    assert_log_safe(md, what=what)  # the same text is in a CI log (job summary, --output file)
    tokens = _MD.parse(md)
    assert not list(_link_tokens(tokens)), f"{what}: a link or an image"
    foreign = [t.content for t in _html_tokens(tokens) if not OUR_HTML.match(t.content)]
    assert not foreign, f"{what}: raw HTML {foreign!r}"
    rendered = _MD.render(md)
    assert rendered.count("<details>") == rendered.count("</details>"), f"{what}: <details> closed early"
    # prose: the rendered HTML without code spans, code blocks and Mermaid diagrams
    prose = re.sub(r"<code[^>]*>.*?</code>", "", rendered, flags=re.S)
    assert not re.search(r"@\w", prose), f"{what}: a live @-mention"
    assert not re.search(r"(?i)(?:https?|ftp|mailto|xmpp):|www\.", prose), f"{what}: a bare URL GitHub links"
    # the hostile line as a reader sees it: every character there, no tag or code span cut into it
    seen = html.unescape(rendered.replace(ZWSP, ""))
    assert shows in seen, f"{what}: {shows!r} does not read back whole"


def assert_xml_round_trips(text: str, expected: str, *, what: str) -> None:
    assert_log_safe(text, what=what)
    root = ET.fromstring(text)
    values = [v for e in root.iter() for v in (e.text or "", e.tail or "", *e.attrib.values())]
    assert any(expected in v for v in values), f"{what}: {expected!r} not given back"


# --- check: six formats ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def check_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-check")
    (root / "contracts").mkdir()
    (root / "contracts" / FILE_NAME).write_text(hostile_contract(), encoding="utf-8")
    _write_policy(root)
    (root / "streamwarden.yaml").write_text("contracts: ['contracts/*.yaml']\npolicies: ['pol']\n", encoding="utf-8")
    return root


def _check(root: Path, fmt: str, summary: Path | None = None) -> Proc:
    env = {"GITHUB_STEP_SUMMARY": str(summary)} if summary else None
    p = sw("check", "--format", fmt, "--now", NOW, cwd=root, env=env)
    assert p.code == 1, p  # ACME-001 and SW-TABLE-006 are errors
    assert_log_safe(p.stderr, what=f"check {fmt} stderr")
    return p


def test_check_text_shows_the_strings_on_their_own_lines_with_controls_visible(check_repo: Path) -> None:
    out = _check(check_repo, "text").stdout
    assert_log_safe(out, what="check text")
    assert "\\x1b[31mred" in out and "\\r" in out  # shown, not sent
    assert f"{LINE} " in out.replace(ZWSP, "")


def test_check_github_annotations_are_ours_only(check_repo: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    out = _check(check_repo, "github", summary).stdout
    assert_log_safe(out, what="check github", annotations=True)
    assert any(line.startswith("::error ") and "ACME-001" in line for line in out.split("\n"))
    assert_markdown_inert(summary.read_text(encoding="utf-8"), what="job summary")


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_check_json_and_sarif_give_the_strings_back(check_repo: Path, fmt: str) -> None:
    out = _check(check_repo, fmt).stdout
    doc = assert_json_round_trips(out, MESSAGE, what=f"check {fmt}")
    if fmt == "json":
        assert {f["file"] for f in doc["findings"]} == {f"contracts/{FILE_NAME}"}
        (waived,) = [f for f in doc["findings"] if f["waived"]]
        assert waived["waiver"]["reason"] == REASON
        (more,) = [f for f in doc["findings"] if "more" in f]  # the ACME-001 findings not listed
        assert more["more"]["errors"] == 5 and f"contracts/{FILE_NAME}" in more["message"]
    else:  # a SARIF location is a URI: the file name percent-encoded, whole
        uris = {unquote(s) for s in _walk(doc) if s.startswith("contracts/")}
        assert uris == {f"contracts/{FILE_NAME}"}


def test_check_junit_parses_and_gives_the_message_back(check_repo: Path) -> None:
    assert_xml_round_trips(_check(check_repo, "junit").stdout, XML_INVALID.sub("\ufffd", MESSAGE), what="check junit")


def test_check_markdown_comment_is_inert(check_repo: Path) -> None:
    assert_markdown_inert(_check(check_repo, "markdown").stdout, what="check markdown")


# --- diff: the contract review -------------------------------------------------------------------


@pytest.fixture(scope="module")
def diff_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = Repo(tmp_path_factory.mktemp("hostile-diff") / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("feature")
    # a consumer and a waiver with hostile text arrive with a breaking change and a column dropped
    # (a change the consumers are named on)
    head = hostile_contract().replace("max_parallelism: 128", "max_parallelism: 256")
    repo.write("contracts/orders.yaml", head.replace('    - {name: amount, type: "decimal(12,2)", id: 2}\n', ""))
    repo.commit("hostile change")
    return repo.path


def test_diff_markdown_review_is_inert(diff_repo: Path) -> None:
    p = sw("diff", "--base", "main", "--format", "markdown", "--now", NOW, cwd=diff_repo)
    assert p.code == 1, p  # max_parallelism changed: breaking
    assert_log_safe(p.stderr, what="diff stderr")
    assert_markdown_inert(p.stdout, what="diff markdown")


def test_diff_json_review_gives_the_strings_back(diff_repo: Path) -> None:
    p = sw("diff", "--base", "main", "--format", "json", "--now", NOW, cwd=diff_repo)
    assert p.code == 1, p
    doc = assert_json_round_trips(p.stdout, LINE, REASON, what="diff json")
    consumers = {c for pl in doc["pipelines"] for ch in pl["changes"] for c in ch["consumers"]}
    assert LINE in consumers


# --- gate, evidence, savepoint inspect: strings from a savepoint and a policy ---------------------


@pytest.fixture(scope="module")
def recovery(tmp_path_factory: pytest.TempPathFactory) -> tuple[RecoveryRepo, Path]:
    repo = RecoveryRepo(tmp_path_factory.mktemp("hostile-recovery"))
    repo.write_contract(hostile_contract())
    _write_policy(repo.root)
    config = yaml.safe_load((repo.root / "streamwarden.yaml").read_text())
    (repo.root / "streamwarden.yaml").write_text(yaml.safe_dump({**config, "policies": ["pol"]}))
    repo.commit(1, 20)
    # the savepoint: an operator with state under a hostile uid (SW-STATE-009 names it)
    sp = repo.savepoint(12, [*orders_job(sink_uid=SINK_UID), keyed_operator(UID)], name=f"1a2b{NAME_CONTROLS}")
    return repo, sp


def _recovery(recovery: tuple[RecoveryRepo, Path], verb: str, fmt: str) -> Proc:
    repo, sp = recovery
    p = sw(
        verb, "orders-enrichment", "--env", "prod", "--restore-from", str(sp), "--now", repo.now_arg(),
        "--format", fmt, cwd=repo.root,
    )  # fmt: skip
    assert p.code == (1 if verb == "gate" else 0), p  # the gate denies: ACME-001, SW-STATE-009
    assert_log_safe(p.stderr, what=f"{verb} stderr")
    return p


def test_gate_text_is_inert(recovery: tuple[RecoveryRepo, Path]) -> None:
    out = _recovery(recovery, "gate", "text").stdout
    assert_log_safe(out, what="gate text")
    assert "ACME-001" in out and "\\x1b[31mred" in out
    assert "\\n::error::pwned" in out  # the message's newline shown: it starts no line of its own


def test_gate_json_gives_the_strings_back(recovery: tuple[RecoveryRepo, Path]) -> None:
    out = _recovery(recovery, "gate", "json").stdout
    doc = assert_json_round_trips(out, MESSAGE, CONTROLS, what="gate json")
    assert MESSAGE in {r["message"] for r in doc["reasons"]}


def test_gate_markdown_is_inert(recovery: tuple[RecoveryRepo, Path]) -> None:
    assert_markdown_inert(_recovery(recovery, "gate", "markdown").stdout, what="gate markdown")


def test_evidence_json_gives_the_strings_back(recovery: tuple[RecoveryRepo, Path]) -> None:
    out = _recovery(recovery, "evidence", "json").stdout
    assert_json_round_trips(out, MESSAGE, UID, LINE, what="evidence json")


def test_evidence_markdown_is_inert(recovery: tuple[RecoveryRepo, Path]) -> None:
    md = _recovery(recovery, "evidence", "markdown").stdout
    assert_markdown_inert(md, what="evidence markdown")
    assert "```mermaid" in md  # the timeline is drawn, its labels escaped (test_recovery_markdown)


def test_evidence_notices_markdown_is_inert(recovery: tuple[RecoveryRepo, Path]) -> None:
    md = _recovery(recovery, "evidence", "notices").stdout
    assert_markdown_inert(md, what="evidence notices")  # the consumer's name, as written in the contract


def test_evidence_notices_json_gives_the_strings_back(recovery: tuple[RecoveryRepo, Path]) -> None:
    out = _recovery(recovery, "evidence", "notices-json").stdout
    doc = assert_json_round_trips(out, LINE, what="evidence notices json")
    assert LINE in {n["consumer"]["name"] for n in doc["notices"]}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_savepoint_inspect_is_inert(recovery: tuple[RecoveryRepo, Path], fmt: str) -> None:
    repo, sp = recovery
    p = sw("savepoint", "inspect", str(sp), "--contract", "contracts/orders.yaml", "--format", fmt, cwd=repo.root)
    assert p.code == 0, p
    if fmt == "json":
        assert_json_round_trips(p.stdout, UID, str(sp), what="inspect json")
    else:
        assert_log_safe(p.stdout, what="inspect text")
        assert "dedup\\x1b[31mred" in p.stdout and "\\n::error::uid" in p.stdout


# --- policy doc: the rule catalog from a custom policy's METADATA --------------------------------


@pytest.mark.parametrize("table", [False, True], ids=["catalog", "table"])
def test_policy_doc_is_inert(check_repo: Path, table: bool) -> None:
    p = sw("policy", "doc", "--policy", "pol", *(["--table"] if table else []), cwd=check_repo)
    assert p.code == 0, p
    assert_markdown_inert(p.stdout, what="policy doc")
    if not table:
        # the example is a code block no line of it can close
        assert "\\x1b[2J</details>" in p.stdout and "\n```\n::" not in p.stdout
