"""The README is an overview that starts with the project's two commands, every page of docs/ is in
its index, and the rule catalog says what the code does."""

from __future__ import annotations

import re

from click.testing import CliRunner
from tests.cli import sw
from tests.conftest import REPO, invoke

README = REPO / "README.md"
DOCS = REPO / "docs"


def test_policy_doc_renders_every_rule_with_what_why_and_fix(runner: CliRunner) -> None:
    from streamwarden.engine import load_policy_set

    out = invoke(runner, "policy", "doc").output
    rules = load_policy_set().rules
    assert len(rules) >= 60
    for rule_id in rules:
        assert f"### {rule_id}: " in out
    assert out.count("**How to fix it.**") == len(rules)


def test_every_built_in_rule_is_in_an_area_of_the_catalog_and_the_table_heads_it() -> None:
    catalog = (DOCS / "rules.md").read_text(encoding="utf-8")
    assert "## Custom rules" not in catalog  # the area of rules from --policy directories only
    table = sw("policy", "doc", "--table", cwd=REPO)
    assert table.code == 0, table
    assert table.stdout.startswith("| id | severity | title |") and table.stdout in catalog


def test_readme_starts_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    head = text[: text.index("\n## ")]  # before the first section
    block = re.search(r"^```sh\n(.*?)^```$", head, re.DOTALL | re.MULTILINE)
    assert block, "the README's first block must hold the two commands"
    commands = [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]
    assert commands == ["make demo", "make test"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "\ndemo:" in makefile and "\ntest:" in makefile


def test_readme_stays_an_overview() -> None:
    size = len(README.read_text(encoding="utf-8").encode("utf-8"))
    assert size <= 14_000, f"README.md is {size} bytes: put the detail on a page of docs/ (listed in docs/README.md)"


def test_the_docs_index_lists_every_page_once() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\d+\. \[([\w-]+\.md)\]\(\1\) — \S", index, re.MULTILINE)
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
    assert sorted(listed) == pages
    assert len(listed) == len(set(listed))
    numbers = [int(n) for n in re.findall(r"^(\d+)\. ", index, re.MULTILINE)]
    assert numbers == list(range(1, len(pages) + 1))  # one reading order
    assert "(docs/README.md)" in README.read_text(encoding="utf-8")


def test_the_changelog_is_release_notes_for_the_packaged_version() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE)
    assert version
    releases = re.findall(r"^## (\S+)", text, re.MULTILINE)
    assert releases and releases[0] == version.group(1), (releases, version.group(1))
    first = text.split("\n## ")[1].split("\n## ", 1)[0]
    sections = re.findall(r"^### (.+)$", first, re.MULTILINE)
    assert sections and set(sections) <= {"Added", "Changed", "Fixed", "Security"}, sections
    assert len(sections) == len(set(sections))
