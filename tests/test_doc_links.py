"""No document points at a file that is not in the repository: relative Markdown links and
backticked repository paths (`docs/x.md`, `contracts/...`) in README.md and docs/*.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# a path into one of the repository's own directories, or one of its top-level files
_REPO_PATH = re.compile(
    r"(?:docs|contracts|policies|scripts|src|tests|\.github)/[^\s`'\"]+"
    r"|README\.md|ARCHITECTURE\.md|CHANGELOG\.md|pyproject\.toml|Makefile|action\.yml|\.pre-commit-hooks\.yaml"
)
_PLACEHOLDER = re.compile(r"[<>*{}]|\.\.\.|\bNAME\b|\bFILE\b")


def references(text: str) -> list[tuple[str, str]]:
    """(kind, target) of every relative link and backticked repository path outside code blocks."""
    prose = _FENCE.sub("", text)
    out = [("link", m.group(1)) for m in _LINK.finditer(_CODE_SPAN.sub("", prose))]
    out += [("path", m.group(1)) for m in _CODE_SPAN.finditer(prose) if _REPO_PATH.fullmatch(m.group(1))]
    return [(k, t) for k, t in out if not re.match(r"[a-z][a-z0-9+.-]*:|#", t) and not _PLACEHOLDER.search(t)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_docs_point_only_at_files_in_the_repository(doc: Path) -> None:
    missing = []
    for kind, target in references(doc.read_text(encoding="utf-8")):
        where = doc.parent / target.split("#")[0] if kind == "link" else REPO / target.rstrip("/")
        if not where.exists():
            missing.append(f"{kind} {target}")
    assert not missing, f"{doc.name} points at files that do not exist: {missing}"


def test_the_scan_finds_links_and_paths_and_skips_placeholders_and_urls() -> None:
    text = (
        "See [the guide](docs/nope.md), `contracts/schema/x.json`, `docs/facts-<source>.md`,\n"
        "`contracts/**/*.yaml`, [site](https://example.com/a.md), [top](#rules), `streamwarden.yaml`.\n"
        "```yaml\nuses: docs/in-a-code-block.md\n```\n"
    )
    assert references(text) == [("link", "docs/nope.md"), ("path", "contracts/schema/x.json")]
