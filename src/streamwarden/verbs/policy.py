"""``policy test`` and ``policy doc``: the policy set's Rego unit tests, and its rule catalog.
Data only: the command line prints the test results, report/catalog.py renders the catalog."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from streamwarden.engine import PolicySet, load_policy_set
from streamwarden.engine.limits import Limits
from streamwarden.engine.testing import PolicyTestRun, run_tests


def run_policy_tests(
    dirs: Sequence[Path], engine: str, coverage: bool, *, builtin: bool, limits: Limits, root: Path
) -> PolicyTestRun:
    """Every ``test_*`` rule of the built-in policies (unless ``builtin`` is false) and of ``dirs``,
    on ``engine``, with coverage when asked."""
    return run_tests(load_policy_set(list(dirs), builtin=builtin, root=root), engine, coverage, limits=limits)


def policy_catalog(dirs: Sequence[Path], root: Path) -> PolicySet:
    """The built-in policies and ``dirs``, whose METADATA the catalog is rendered from."""
    return load_policy_set(list(dirs), root=root)
