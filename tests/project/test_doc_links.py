"""No document points at a file that is not in the repository: relative Markdown links (and the
heading each `#anchor` names) and backticked repository paths (`docs/x.md`, `contracts/...`) in
README.md, CHANGELOG.md and docs/*.md; no file of the repository cites a page of docs/ that is gone,
or notes kept outside the repository."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import pytest
from tests.conftest import REPO

DOCS = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# a path into one of the repository's own directories, or one of its top-level files
_REPO_PATH = re.compile(
    r"(?:docs|contracts|policies|scripts|src|tests|\.github)/[^\s`'\"]+"
    r"|README\.md|ARCHITECTURE\.md|CHANGELOG\.md|pyproject\.toml|Makefile|action\.yml|\.pre-commit-hooks\.yaml"
)
_OUTSIDE = re.compile(r"/work/shared\S*|\breference/[\w-]+\.md\b|\bstack-notes\b")  # notes kept outside the repository
_PLACEHOLDER = re.compile(r"[<>*{}]|\.\.\.|\bNAME\b|\bFILE\b")


def references(text: str) -> list[tuple[str, str]]:
    """(kind, target) of every relative link and backticked repository path outside code blocks."""
    prose = _FENCE.sub("", text)
    out = [("link", m.group(1)) for m in _LINK.finditer(_CODE_SPAN.sub("", prose))]
    out += [("path", m.group(1)) for m in _CODE_SPAN.finditer(prose) if _REPO_PATH.fullmatch(m.group(1))]
    return [(k, t) for k, t in out if not re.match(r"[a-z][a-z0-9+.-]*:|#", t) and not _PLACEHOLDER.search(t)]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces turned into -."""
    text = re.sub(r"`|\*\*", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every anchor of a Markdown page: its headings' (a repeated one gets -1, -2, ...) and explicit ids."""
    seen: dict[str, int] = {}
    out = set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", page.read_text(encoding="utf-8")))
    for heading in re.findall(r"^#{1,6} (.+?)#*$", _FENCE.sub("", page.read_text(encoding="utf-8")), re.MULTILINE):
        base = slug(heading)
        out.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return frozenset(out)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_docs_point_only_at_files_in_the_repository(doc: Path) -> None:
    missing = []
    for kind, target in references(doc.read_text(encoding="utf-8")):
        where = doc.parent / target.split("#")[0] if kind == "link" else REPO / target.rstrip("/")
        if not where.exists():
            missing.append(f"{kind} {target}")
    assert not missing, f"{doc.name} points at files that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_anchor_a_doc_links_to_is_a_heading_of_its_page(doc: Path) -> None:
    prose = _CODE_SPAN.sub("", _FENCE.sub("", doc.read_text(encoding="utf-8")))
    broken = []
    for target in (m.group(1) for m in _LINK.finditer(prose)):
        path, _, anchor = target.partition("#")
        if not anchor or re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        page = doc.parent / path if path else doc
        if page.suffix == ".md" and page.is_file() and anchor not in anchors(page):
            broken.append(target)
    assert not broken, f"{doc.name} links to headings that do not exist: {broken}"


def test_the_anchor_of_a_heading_is_githubs() -> None:
    assert slug("Connection (`environments.<name>.flink` in streamwarden.yaml)") == (
        "connection-environmentsnameflink-in-streamwardenyaml"
    )
    assert slug("Starting from what runs: `streamwarden init`") == "starting-from-what-runs-streamwarden-init"
    assert slug("check [PATH...]") == "check-path"


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [
        REPO / name
        for name in names.decode().split("\0")
        if name
        and name.endswith((".py", ".md", ".rego", ".json", ".yaml", ".yml", ".toml", "Makefile", ".sh"))
        and (REPO / name).is_file()
        and not name.startswith("tests/fixtures/")
    ]


def test_no_file_cites_a_docs_page_that_is_gone_or_notes_outside_the_repository() -> None:
    gone, outside = [], []
    for path in tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(REPO).as_posix()
        if not where.startswith("tests/"):  # tests make docs/ pages of their own in temporary repositories
            gone += [f"{where}: {m}" for m in re.findall(r"\bdocs/[\w.-]+\.md\b", text) if not (REPO / m).is_file()]
        if path != Path(__file__):
            outside += [f"{where}: {m}" for m in _OUTSIDE.findall(text)]
    assert not gone, f"files cite pages of docs/ that do not exist: {gone}"
    assert not outside, f"files cite notes kept outside the repository: {outside}"


def test_the_scan_finds_links_and_paths_and_skips_placeholders_and_urls() -> None:
    text = (
        "See [the guide](docs/nope.md), `contracts/schema/x.json`, `docs/facts-<source>.md`,\n"
        "`contracts/**/*.yaml`, [site](https://example.com/a.md), [top](#rules), `streamwarden.yaml`.\n"
        "```yaml\nuses: docs/in-a-code-block.md\n```\n"
    )
    assert references(text) == [("link", "docs/nope.md"), ("path", "contracts/schema/x.json")]
