"""The README and the rule catalog say what the code does."""

from __future__ import annotations

from click.testing import CliRunner
from tests.conftest import REPO, invoke


def test_policy_doc_renders_every_rule_with_what_why_and_fix(runner: CliRunner) -> None:
    from streamwarden.engine import load_policy_set

    out = invoke(runner, "policy", "doc").output
    rules = load_policy_set().rules
    assert len(rules) >= 60
    for rule_id in rules:
        assert f"### {rule_id}: " in out
    assert out.count("**How to fix it.**") == len(rules)


def test_readme_starts_with_the_two_commands() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    head = text[: text.index("## A short tour")]
    assert "make test" in head
    assert "streamwarden check" in head
