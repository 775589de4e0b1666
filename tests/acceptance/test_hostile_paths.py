"""Hostile paths, numbers and flags get one clear line and exit 2, never an internal error or a hang.

Each case runs the installed ``streamwarden`` in a subprocess (issue 16, items 14 and 15).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT
from tests.gitrepo import Repo


def _unusable(p: Proc, *needles: str) -> None:
    assert p.code == 2, p
    assert "internal error" not in p.output, p
    for needle in needles:
        assert needle in p.output, p


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts/orders.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("field", "replace", "unit"),
    [
        ("checkpoint.interval", ("interval: 60s", "interval: {n}s"), "ms"),
        ("state.max_size", ("max_size: 50GiB", "max_size: {n}GiB"), "bytes"),
        ("checkpoint.timeout", ("timeout: 10m", "timeout: {n}m"), "ms"),
    ],
)
@pytest.mark.parametrize("digits", [20, 400, 5000])
def test_a_huge_duration_or_size_is_too_large_not_a_crash(
    root: Path, field: str, replace: tuple[str, str], unit: str, digits: int
) -> None:
    old, new = replace
    path = root / "contracts/orders.yaml"
    path.write_text(CLEAN_CONTRACT.replace(old, new.format(n="9" * digits)), encoding="utf-8")
    p = sw("check", cwd=root)
    _unusable(p, "contracts/orders.yaml:", field, "is too large", unit)
    assert "9" * 41 not in p.output  # the value is shortened, not echoed whole


def test_the_largest_duration_flink_holds_is_accepted(root: Path) -> None:
    path = root / "contracts/orders.yaml"
    path.write_text(CLEAN_CONTRACT.replace("max_age: 5m", f"max_age: {2**63 - 1}ms"), encoding="utf-8")
    p = sw("validate", cwd=root)
    assert p.code == 0, p


@pytest.mark.parametrize(
    ("glob", "problem"),
    [
        ("/**/*.yaml", "is absolute"),
        ("../../**/*.yaml", "climbs out of the repository"),
        ("contracts/../../x/*.yaml", "climbs out of the repository"),
        ("contracts/\\0x.yaml", "control character"),
    ],
)
def test_a_glob_that_leaves_the_repository_is_refused(root: Path, glob: str, problem: str) -> None:
    (root / "streamwarden.yaml").write_text(f'contracts: ["{glob}"]\n', encoding="utf-8")
    p = sw("check", cwd=root, timeout=60)
    _unusable(p, "streamwarden.yaml:1", "contracts[0]", problem)


def test_a_policy_directory_outside_the_repository_is_refused(root: Path) -> None:
    (root / "streamwarden.yaml").write_text("policies: [../elsewhere]\n", encoding="utf-8")
    p = sw("check", cwd=root)
    _unusable(p, "streamwarden.yaml:1", "policies[0]", "climbs out")


def test_a_contract_link_that_leads_outside_the_repository_is_not_read(root: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.yaml"
    outside.write_text(CLEAN_CONTRACT.replace("orders-enrichment", "secret-pipeline"), encoding="utf-8")
    (root / "contracts/linked.yaml").symlink_to(outside)
    (root / "streamwarden.yaml").write_text('contracts: ["contracts/*.yaml"]\n', encoding="utf-8")
    p = sw("check", cwd=root)
    _unusable(p, "linked.yaml", "leads outside the repository")
    assert "secret-pipeline" not in p.output


def test_a_deeply_nested_baseline_is_a_clear_error(root: Path) -> None:
    (root / "baseline.json").write_text("[" * 200_000, encoding="utf-8")
    p = sw("check", "--baseline", "baseline.json", "contracts", cwd=root)
    _unusable(p, "baseline.json", "nested too deeply")


@pytest.mark.parametrize("args", [("check", "--base", ""), ("check", "--base", "  "), ("diff", "--base", "")])
def test_an_empty_base_ref_is_refused_not_a_plain_check(tmp_path: Path, args: tuple[str, ...]) -> None:
    """``--base "$BASE"`` with BASE unset must not quietly drop the trusted policies and waivers."""
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    p = sw(*args, cwd=repo.path)
    _unusable(p, "--base is empty")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("where", ["contract", "glob", "deployment"])
def test_a_fifo_never_hangs_the_run(root: Path, where: str) -> None:
    fifo = root / "contracts/pipe.yaml"
    os.mkfifo(fifo)
    if where == "contract":
        p = sw("check", "contracts/pipe.yaml", cwd=root, timeout=30)
        _unusable(p, "pipe.yaml", "not a regular file")
    elif where == "glob":
        (root / "streamwarden.yaml").write_text('contracts: ["contracts/*.yaml"]\n', encoding="utf-8")
        p = sw("check", cwd=root, timeout=30)
        _unusable(p, "pipe.yaml", "not a regular file")
    else:
        text = CLEAN_CONTRACT.replace("job:\n", "job:\n  deployment: [pipe.yaml]\n", 1)
        (root / "contracts/orders.yaml").write_text(text, encoding="utf-8")
        p = sw("check", "--format", "json", "contracts/orders.yaml", cwd=root, timeout=30)
        assert p.code == 1, p  # a deployment file that cannot be read is an error finding
        assert any("not a regular file" in f["message"] for f in p.json()["findings"]), p


def test_a_device_as_a_savepoint_is_not_read(root: Path) -> None:
    p = sw("savepoint", "inspect", "/dev/zero", cwd=root, timeout=30)
    _unusable(p, "/dev/zero", "not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_as_metadata_never_hangs_savepoint_inspect(root: Path) -> None:
    (root / "sp").mkdir()
    os.mkfifo(root / "sp/_metadata")
    p = sw("savepoint", "inspect", "sp", cwd=root, timeout=30)
    _unusable(p, "_metadata is not a regular file")


def test_a_metadata_with_too_many_operators_is_refused_before_it_costs_memory(root: Path) -> None:
    from tests.savepoint_files import stateless_operator, write_savepoint

    write_savepoint(root / "sp", [stateless_operator(f"op-{i}") for i in range(25_000)])
    p = sw("savepoint", "inspect", "sp", cwd=root, timeout=60)
    _unusable(p, "operator states", "0..20000")


@pytest.mark.parametrize(("since", "problem"), [("1000000d", "before 1970"), ("9" * 30 + "d", "too large")])
def test_evidence_since_far_in_the_past_is_a_clear_error(root: Path, since: str, problem: str) -> None:
    (root / "streamwarden.yaml").write_text("environments:\n  prod: {}\n", encoding="utf-8")
    p = sw("evidence", "orders-enrichment", "--env", "prod", "--since", since, cwd=root)
    _unusable(p, "--since", problem)


HOSTILE_NAME = "Map\n::error::pwned\r##[group]x\x1b]8;;http://evil\x07\x00"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_savepoint_inspect_prints_operator_names_escaped(root: Path, fmt: str) -> None:
    """An operator's uid and name come from the savepoint file: they must not become a workflow command."""
    from tests.savepoint_files import stateless_operator, write_savepoint

    write_savepoint(
        root / "sp",
        [stateless_operator(HOSTILE_NAME, name=HOSTILE_NAME), stateless_operator(None, name=HOSTILE_NAME + "-2")],
    )
    p = sw("savepoint", "inspect", "sp", "--format", fmt, cwd=root)
    assert p.code == 0, p
    for line in p.output.splitlines():
        assert not line.lstrip().startswith("::"), line
    assert "##[" not in p.output
    assert not any(c in p.output for c in "\r\x00\x1b\x07"), repr(p.output)
    if fmt == "json":  # the document still holds the name as written
        names = [op["name"] for op in p.json()["operators"]]
        assert HOSTILE_NAME in names


@pytest.mark.parametrize("entry", ["deploy/a\\0b.yaml", "deploy/a\\x1b[31mb.yaml", "deploy/a\\rb.yaml"])
def test_a_control_character_in_a_deployment_path_is_a_clear_error(root: Path, entry: str) -> None:
    text = CLEAN_CONTRACT.replace("job:\n", f'job:\n  deployment: ["{entry}"]\n', 1)
    (root / "contracts/orders.yaml").write_text(text, encoding="utf-8")
    p = sw("check", "contracts/orders.yaml", cwd=root)
    _unusable(p, "contracts/orders.yaml:", "job.deployment[0]", "control character")


# a name longer than a directory entry can be (255 bytes on Linux): the system refuses it with
# ENAMETOOLONG, which is neither "missing" nor a file to read
LONG = "d" * 300


@pytest.mark.parametrize("cache", [False, True])
def test_a_deployment_entry_the_system_refuses_is_sw_fact_001_not_a_crash(root: Path, cache: bool) -> None:
    text = CLEAN_CONTRACT.replace("job:\n", f'job:\n  deployment: ["{LONG}/flink.yaml"]\n', 1)
    (root / "contracts/orders.yaml").write_text(text, encoding="utf-8")
    args = ("--cache", str(root / ".cache")) if cache else ("--no-cache",)
    for _ in range(2 if cache else 1):  # with a cache, the second run's lookup hashes the entry too
        p = sw("check", "contracts/orders.yaml", "--format", "json", *args, cwd=root)
        assert p.code == 1, p  # fails closed: the pipeline's deployment facts are unavailable
        assert "internal error" not in p.output, p
        facts = [f for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
        assert [f["path"] for f in facts] == ["job.deployment[0]"], p
        assert "File name too long" in facts[0]["message"]


@pytest.mark.parametrize(
    "args",
    [
        ("check", "{long}"),
        ("validate", "{long}/contract.yaml"),
        ("check", "contracts", "--config", "{long}/streamwarden.yaml"),
        ("check", "contracts", "--policy", "{long}"),
        ("savepoint", "inspect", "{long}/_metadata"),
        ("policy", "test", "{long}"),
    ],
)
def test_a_path_argument_the_system_refuses_is_a_clear_error(root: Path, args: tuple[str, ...]) -> None:
    p = sw(*(a.format(long=LONG) for a in args), cwd=root)
    _unusable(p, f"{LONG}", "cannot use this path: File name too long", "hint: check the path")
