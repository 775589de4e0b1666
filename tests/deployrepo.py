"""A temporary repository for CLI tests of deployment files: the clean contract of conftest with a
``job.deployment`` list, and the files it names under contracts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW

CONTRACT_FILE = "contracts/orders.yaml"
FIXTURES = Path(__file__).parent / "fixtures" / "deploy"

# A flink-conf.yaml that agrees with the clean contract (Flink 1.x, flat lines only).
CLEAN_FLINK_CONF = (FIXTURES / "legacy" / "flink-conf.yaml").read_text(encoding="utf-8")


def make_repo(root: Path, entries: list[str], files: dict[str, str | bytes], contract: str = CLEAN_CONTRACT) -> Path:
    listed = "".join(f"    - {e}\n" for e in entries)
    text = contract.replace(
        "  restart_strategy: exponential-delay\n",
        "  restart_strategy: exponential-delay\n  deployment:\n" + listed,
        1,
    )
    (root / "contracts").mkdir(parents=True, exist_ok=True)
    (root / CONTRACT_FILE).write_text(text, encoding="utf-8")
    for rel, body in files.items():
        p = root / "contracts" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body, encoding="utf-8")
    return root


def check(repo: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    r = sw("check", "--now", NOW, "--format", "json", *extra, cwd=repo)
    assert r.code in (0, 1), r
    return r.code, r.json()["findings"]


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def rules(findings: list[dict[str, Any]]) -> list[tuple[str, str, int | None]]:
    """(rule, file, line) of each finding, sorted."""
    return sorted((f["rule"], f.get("file") or "", f.get("line")) for f in findings)
