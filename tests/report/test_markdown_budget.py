"""The pull-request comment holds GitHub's 65,536-character limit, headers and all, however many
pipelines fail, and says what it left out and where the full report is."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW

LIMIT = 65_536


def failing_contracts(root: Path, n: int) -> Path:
    d = root / "contracts"
    d.mkdir()
    for i in range(n):
        text = CLEAN_CONTRACT.replace("name: orders-enrichment", f"name: orders-enrichment-{i:04d}")
        text = text.replace("freshness: 30m", "freshness: 1m")  # SW-TABLE-006
        text = text.replace("storage: s3://lake-checkpoints/orders-enrichment", f"storage: file:///tmp/ckpt/{i}")
        (d / f"orders-{i:04d}.yaml").write_text(text, encoding="utf-8")
    return d


@pytest.mark.parametrize("n", [150, 1000])
def test_many_failing_pipelines_fit_in_one_comment_with_a_cut_notice(tmp_path: Path, n: int) -> None:
    failing_contracts(tmp_path, n)
    p = sw("check", "contracts", "--format", "markdown", "--now", NOW, cwd=tmp_path, timeout=600)
    assert p.code == 1, p.stderr
    text = p.stdout
    assert len(text) <= LIMIT, len(text)
    assert text.startswith("<!-- streamwarden -->\n## ❌ streamwarden: ")
    assert "**Cut to fit in 65,536 characters:**" in text
    assert "Every finding is in the job summary of the workflow run" in text
    assert "`streamwarden check --format json`" in text
    assert text.rstrip().endswith("</sub>")  # the footer is never cut
    assert text.count("<details>") == text.count("</details>")
    # what is shown is whole rows: each table row closes its last cell
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows and all(line.endswith("|") for line in rows)


def test_a_few_findings_are_not_cut(tmp_path: Path) -> None:
    failing_contracts(tmp_path, 3)
    text = sw("check", "contracts", "--format", "markdown", "--now", NOW, cwd=tmp_path).stdout
    assert "Cut to fit" not in text
    assert text.count("| `SW-TABLE-006`") == 3 and text.count("| `SW-CKPT-004`") == 3
