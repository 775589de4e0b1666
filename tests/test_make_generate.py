"""``make generate`` regenerates every generated file (ARCHITECTURE.md says so): each
``scripts/update_*.py`` is in its recipe — but the Flink key lists, which are read from Flink's own
sources, not from this repository — and a test runs each one's ``--check``, so a stale file fails."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FROM_OUTSIDE = {"update_flink_keys.py"}  # needs Flink's option classes (docs: scripts/update_flink_keys.py)


def _recipe() -> list[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    body = text.split("\ngenerate:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"scripts/(update_\w+\.py)", body)


def test_make_generate_runs_every_update_script() -> None:
    scripts = {p.name for p in (ROOT / "scripts").glob("update_*.py")} - FROM_OUTSIDE
    assert sorted(_recipe()) == sorted(scripts)


def test_each_generated_file_has_a_test_that_fails_when_it_is_stale() -> None:
    tests = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_*.py") if p.name != Path(__file__).name
    )
    for script in _recipe():
        assert script.removesuffix(".py") in tests, f"no test runs {script} --check"
