"""No injected command or markup: text from a contract, a file name or a server never acts as a
GitHub workflow command (``::cmd::`` at a line start, ``##[`` anywhere), a terminal control (CR,
NUL, ANSI/OSC escapes) or Markdown (links, HTML) in any output of any verb, stdout or stderr."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from tests.cli import _SCRIPT, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

from streamwarden.report import FORMATS

# free text may span lines (the schema refuses other control characters: those come from file names)
REASON = "ok\n::error::pwned\n  ::set-output name=x::y ##[error]x http://x link www.evil.example"
NAME = "::error::pwned ##[error]x"
OWNER = "##[warning]owner"
CONSUMER = "::warning::consumer ##[group]c"
APPROVER = "::notice::bob http://evil.example"
# a file name is free text too: control characters and commands the schema cannot refuse
EVIL_DIR = "c\x1b]8;;x\x07\x1b[31m"
BROKEN_FILE = "\n::error::broken \x1b[2J\r::warning::x ##[error]y.yaml"
# a value the schema refuses is echoed in the message
REFUSED_OWNER = "team\r::set-output name=x::y\x1b[31m\x9b2J"
# what the Actions runner would execute, and terminal controls (ESC, CR, NUL, DEL, C1)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
OUR_ANNOTATION = re.compile(r"::(error|warning|notice)( [^:\n]*)?::[^\n]*")


def q(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def evil_contract(reason: str = REASON) -> str:
    c = CLEAN_CONTRACT.replace(
        "name: orders-enrichment\n  owner: payments-data", f"name: {q(NAME)}\n  owner: {q(OWNER)}"
    )
    c = c.replace("freshness: 30m", "freshness: 1m")  # SW-TABLE-006 names the consumer
    c = c.replace("storage: s3://lake-checkpoints/orders-enrichment", "storage: file:///tmp/ckpt")
    c = c.replace("- name: finance-dashboard", f"- name: {q(CONSUMER)}")
    return c + (
        f"waivers:\n  - rule: SW-CKPT-004\n    reason: {q(reason)}\n"
        f"    expires: 2027-01-01\n    approved_by: {q(APPROVER)}\n"
    )


def raw(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """The CLI with byte output: ``sw`` decodes with universal newlines, which hides a raw CR."""
    proc = subprocess.run(
        [str(_SCRIPT), *args],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in proc.stdout + proc.stderr, proc
    return proc.returncode, proc.stdout, proc.stderr


def autolinks(markdown: str) -> list[str]:
    """What GitHub would turn into a link: a bare URL or www. outside code spans (never linked)."""
    prose = re.sub(r"(`+).*?\1", "", markdown)
    return re.findall(r"(?i)(?:https?|ftp|mailto|xmpp):|www\.", prose)


def assert_inert(data: bytes, *, annotations: bool = False, what: str = "") -> None:
    text = data.decode("utf-8")
    assert "##[" not in text, what
    bad = CONTROLS.findall(text)
    assert not bad, f"{what}: control characters {bad!r} in\n{text}"
    for line in text.split("\n"):
        if line.lstrip().startswith("::"):
            assert annotations and OUR_ANNOTATION.fullmatch(line), f"{what}: a workflow command: {line!r}"


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("evil")
    (root / EVIL_DIR).mkdir()
    (root / EVIL_DIR / "evil.yaml").write_text(evil_contract(), encoding="utf-8")
    (root / BROKEN_FILE).write_text(
        "apiVersion: streamwarden/v1\nkind: PipelineContract\nmetadata: {name: 5}\n", encoding="utf-8"
    )
    (root / "refused.yaml").write_text(
        CLEAN_CONTRACT.replace("owner: payments-data", f"owner: {q(REFUSED_OWNER)}"), encoding="utf-8"
    )
    return root


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_output_in_every_format_carries_no_command_or_control(evil: Path, fmt: str) -> None:
    summary = evil / f"summary-{fmt}.md"
    code, out, err = raw(
        "check", EVIL_DIR, BROKEN_FILE, "refused.yaml", "--format", fmt, "--now", NOW, cwd=evil,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert code == 2, (out, err)  # the broken contract is unusable input
    assert_inert(out, annotations=fmt == "github", what=f"{fmt} stdout")
    assert_inert(err, what=f"{fmt} stderr")
    if fmt == "github":
        assert_inert(summary.read_bytes(), what="job summary")
        assert out.count(b"\n::error ") + out.startswith(b"::error ") >= 3  # the finding and the two bad files


def test_the_reports_still_say_what_the_contract_says(evil: Path) -> None:
    p = sw("check", EVIL_DIR, "--format", "json", "--now", NOW, cwd=evil)
    doc = p.json()  # the JSON escapes decode to the original values
    assert {f["pipeline"] for f in doc["findings"]} == {NAME}
    (waived,) = [f for f in doc["findings"] if f["waived"]]
    assert waived["waiver"]["reason"] == REASON
    text = sw("check", EVIL_DIR, "--now", NOW, cwd=evil).stdout
    assert "::error::pwned ##\u200b[error]x" in text and "\\x1b]8;;x\\x07" in text
    assert "reason: ok\\n::error::pwned\\n  ::set-output" in text


def test_validate_and_facts_echo_no_command_or_control(evil: Path) -> None:
    code, out, err = raw("validate", EVIL_DIR, BROKEN_FILE, "refused.yaml", cwd=evil)
    assert code == 2
    assert_inert(out, what="validate stdout")
    assert_inert(err, what="validate stderr")
    assert b"broken" in err and b"metadata.name" in err
    assert b"metadata.owner: contains the control character \\r" in err
    code, out, err = raw("facts", NAME, "--contracts", EVIL_DIR, "--now", NOW, cwd=evil)
    assert code == 0, err
    assert_inert(out, what="facts stdout")
    assert json.loads(out)["contract"]["metadata"]["owner"] == OWNER


@pytest.fixture(scope="module")
def evil_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = Repo(tmp_path_factory.mktemp("evil-repo") / "repo")
    repo.write("streamwarden.yaml", 'contracts: ["contracts/**/*.yaml"]\n')
    repo.write("contracts/orders.yaml", evil_contract("before"))
    repo.commit("base")
    repo.branch("feature")
    head = evil_contract().replace("interval: 60s", "interval: 45s").replace("- uid: orders-dedup", "- uid: ::x::y")
    repo.write("contracts/orders.yaml", head)
    repo.commit("evil change")
    return repo.path


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_diff_review_carries_no_command_control_or_link(evil_repo: Path, fmt: str) -> None:
    code, out, err = raw("diff", "--base", "main", "--format", fmt, "--now", NOW, cwd=evil_repo)
    assert code in (0, 1), err
    assert_inert(out, what=f"diff {fmt}")
    assert_inert(err, what="diff stderr")
    if fmt == "markdown":
        assert not autolinks(out.decode()), out.decode()
        assert "pwned" in out.decode()


def test_check_base_markdown_comment_defuses_links_and_commands(evil_repo: Path) -> None:
    code, out, err = raw("check", "--base", "main", "--format", "markdown", "--now", NOW, cwd=evil_repo)
    assert code == 1, err
    assert_inert(out, what="comment")
    text = out.decode()
    assert not autolinks(text), text
    assert "http\u200b://evil.example" in text  # the approver, readable but not a link
    assert "### Contract changes" in text and "<img" not in text
