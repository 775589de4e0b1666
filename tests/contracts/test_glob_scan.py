"""The contract globs of streamwarden.yaml are matched with one os.scandir per directory
(contracts.load._glob_files); the files found must be exactly the ones Path.glob finds, on a tree
with the shapes a repository has: nested pipeline folders, a directory named like the file, files
of other extensions, names that differ only in case, hidden and non-ASCII names."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamwarden.contracts.load import _glob_files, _scan_glob
from streamwarden.core import runstate

PATTERNS = [
    "contracts/**/*.yaml",
    "contracts/**/contract.yaml",
    "contracts/**/Contract.yaml",
    "contracts/*/contract.yaml",
    "contracts/team-*/**/contract.yaml",
    "**/contract.yaml",
    "**/*.yml",
    "contracts/**/dé.yaml",
    "contracts/**/deploy",
    "contracts/**/c?ntract.yaml",
]


def _tree(root: Path) -> Path:
    files = [
        "contracts/team-a/p1/contract.yaml",
        "contracts/team-a/p1/deploy/flink.yaml",
        "contracts/team-a/p2/contract.yaml",
        "contracts/team-a/p2/Contract.yaml.bak",
        "contracts/team-b/p3/CONTRACT.yaml",
        "contracts/team-b/p3/contract.yml",
        "contracts/team-b/deep/er/still/contract.yaml",
        "contracts/team-b/dé.yaml",
        "contracts/.hidden/contract.yaml",
        "contracts/contract.yaml",
        "contract.yaml",
        "other/contract.yaml",
        "contracts/team-c/deploy",
    ]
    for f in files:
        path = root / f
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("kind: PipelineContract\n", encoding="utf-8")
    (root / "contracts" / "team-c" / "contract.yaml").mkdir(parents=True)  # a directory named like the file
    (root / "contracts" / "empty").mkdir()
    return root


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_scandir_glob_finds_what_path_glob_finds(tmp_path: Path, pattern: str) -> None:
    root = _tree(tmp_path.resolve())
    with runstate.begin():
        _same_as_path_glob(root, pattern)


def _same_as_path_glob(root: Path, pattern: str) -> None:
    want = [p for p in sorted(root.glob(pattern)) if not p.is_dir()]
    assert _scan_glob(root, pattern) is not None  # answered by the scan, not by Path.glob
    assert _glob_files(root, pattern) == want


@pytest.mark.parametrize("pattern", ["contracts/**/contract.yaml", "contracts/**/*.yaml"])
def test_a_symbolic_link_below_leaves_the_glob_to_path_glob(tmp_path: Path, pattern: str) -> None:
    root = _tree(tmp_path.resolve())
    (root / "contracts" / "team-b" / "linked").symlink_to(root / "contracts" / "team-a")
    with runstate.begin():
        assert _scan_glob(root, pattern) is None
        assert _glob_files(root, pattern) == [p for p in sorted(root.glob(pattern)) if not p.is_dir()]
