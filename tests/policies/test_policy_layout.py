"""The built-in pack's layout: a rule is found by its id, with its tests beside it.

policies/streamwarden/<package>/ holds one package's files (lib.rego, the shared helpers, sits
above them). A rule id lives in the file named for it, sw_<prefix>_<number>.rego (SW-CKPT-003 ->
checkpoint/sw_ckpt_003.rego): its METADATA and its bodies. A body that can only fire on facts the
others do not need (live facts, a base, the gate) sits beside it in sw_<prefix>_<number>_<side>.rego
with those conditions (METADATA custom.requires): the engine selects whole files, so a static
check never evaluates it (nor reads the time through it). The other files of a package hold
helpers only, and every file has its <name>_test.rego beside it. These tests read the files as
text: a body's rule id is the "SW-..." literal it reports (a file of one rule may build its
findings in a helper).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from streamwarden.core.resources import policies_dir
from streamwarden.engine.policyset import parse_metadata, parse_requires

ROOT = policies_dir() / "streamwarden"
RULE_FILE = re.compile(r"(sw_[a-z]+_[0-9]{3})(?:_([a-z]+))?")
RULE_ID = re.compile(r'"(SW-[A-Z]+-[0-9]{3})"')
STATEMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)")
RULE_SETS = {"deny", "warn", "info"}

# The one side in another package's directory: SW-FACT-001 reports there the Flink REST sections
# the checkpoint package's rules read and could not get (its _flink_needed_sections).
OTHER_PACKAGE_SIDES = {"checkpoint/sw_fact_001_flink.rego": "facts/sw_fact_001.rego"}


def _id_of(stem: str) -> str:
    return stem.upper().replace("_", "-")


def _runtime_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.rego") if not p.name.endswith("_test.rego"))


def _package(text: str) -> str:
    m = re.search(r"^package ([\w.]+)", text, re.MULTILINE)
    assert m, "no package line"
    return m.group(1)


def _bodies(text: str) -> list[tuple[str, int, str]]:
    """Top-level statements of a formatted module: (head name, line, code without comments)."""
    out: list[tuple[str, int, list[str]]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        m = STATEMENT.match(line)
        if m:
            out.append((m.group(1), n, [line]))
        elif out and not line.lstrip().startswith("#"):
            out[-1][2].append(line)
    return [(name, n, "\n".join(code)) for name, n, code in out]


def _metadata_ids(text: str, display: str) -> list[str]:
    ids = []
    for block in parse_metadata(text, display):
        custom = block.meta.get("custom")
        if isinstance(custom, dict) and "id" in custom:
            ids.append(str(custom["id"]))
    return ids


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def test_the_pack_is_split_into_one_directory_per_package() -> None:
    misplaced = []
    for p in sorted(ROOT.rglob("*.rego")):
        package = _package(p.read_text(encoding="utf-8"))
        folder = "." if package == "streamwarden.lib" else package.removeprefix("streamwarden.")
        if p.parent.relative_to(ROOT).as_posix() != folder:
            misplaced.append(f"{_rel(p)} (package {package})")
    assert not misplaced, f"files outside their package's directory: {misplaced}"
    assert len(_runtime_files()) > 80


def test_every_rule_id_lives_in_the_files_named_for_it() -> None:
    where: dict[str, set[str]] = {}
    for p in _runtime_files():
        text = p.read_text(encoding="utf-8")
        meta = _metadata_ids(text, _rel(p))
        for rule_id in meta:
            where.setdefault(rule_id, set()).add(f"{_rel(p)} (METADATA)")
        m = RULE_FILE.fullmatch(p.stem)
        for name, line, code in _bodies(text):
            if name not in RULE_SETS:
                continue
            ids = set(RULE_ID.findall(code)) or ({_id_of(m.group(1))} if m else set())
            assert len(ids) == 1, f"{_rel(p)}:{line}: a {name} body reports {sorted(ids) or 'no rule id'}"
            where.setdefault(ids.pop(), set()).add(f"{_rel(p)}:{line}")
    assert len(where) > 80
    wrong = {}
    for rule_id, places in sorted(where.items()):
        stems = {Path(place.split(":")[0].removesuffix(" (METADATA)")).stem for place in places}
        owners = {m.group(1) if (m := RULE_FILE.fullmatch(stem)) else stem for stem in stems}
        metadata = [place.removesuffix(" (METADATA)") for place in places if place.endswith(" (METADATA)")]
        if owners != {rule_id.lower().replace("-", "_")} or [Path(m).stem for m in metadata] != [owners.pop()]:
            wrong[rule_id] = sorted(places)
    assert not wrong, f"rule ids with METADATA or bodies outside sw_<prefix>_<number>[_<side>].rego: {wrong}"


@pytest.mark.parametrize("path", _runtime_files(), ids=_rel)
def test_a_rule_file_is_one_rule_a_side_file_its_other_facts_a_helper_file_none(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    meta = _metadata_ids(text, _rel(path))
    sets = {name for name, _, _ in _bodies(text)} & RULE_SETS
    m = RULE_FILE.fullmatch(path.stem)
    if m is None:
        assert not meta and not sets, f"{_rel(path)} holds helpers only; its rules belong in sw_*.rego files"
    elif m.group(2) is None:
        assert meta == [_id_of(path.stem)], f"{_rel(path)} declares {meta}"
        assert sets, f"{_rel(path)} has no deny/warn/info body"
    else:
        main = ROOT / OTHER_PACKAGE_SIDES.get(_rel(path), _rel(path.with_name(f"{m.group(1)}.rego")))
        assert main.is_file(), f"{_rel(path)} is a side of {_rel(main)}, which does not exist"
        assert not meta and sets, f"{_rel(path)} holds bodies of {_id_of(m.group(1))}; its METADATA is in {_rel(main)}"
        main_text = main.read_text(encoding="utf-8")
        own = parse_requires(parse_metadata(text, _rel(path)), text, _rel(path))
        assert own, f"{_rel(path)} declares no custom.requires: its bodies belong in {_rel(main)}"
        assert own != parse_requires(parse_metadata(main_text, _rel(main)), main_text, _rel(main)), (
            f"{_rel(path)} needs what {_rel(main)} needs: its bodies belong there"
        )


@pytest.mark.parametrize("path", _runtime_files(), ids=_rel)
def test_every_file_has_its_tests_beside_it(path: Path) -> None:
    tests = path.with_name(f"{path.stem}_test.rego")
    assert tests.is_file(), f"{_rel(path)} has no {tests.name} beside it"
    text = tests.read_text(encoding="utf-8")
    names = [name for name, _, _ in _bodies(text) if name.startswith("test_")]
    assert names, f"{_rel(tests)} holds no test"
    if m := RULE_FILE.fullmatch(path.stem):
        rule_id = _id_of(m.group(1))
        assert f'"{rule_id}"' in text, f"{_rel(tests)} never names {rule_id}"


def test_every_test_file_tests_a_file_beside_it() -> None:
    orphans = [
        _rel(t) for t in ROOT.rglob("*_test.rego") if not t.with_name(t.name.replace("_test.rego", ".rego")).is_file()
    ]
    assert not orphans, f"test files without the policy file they test: {orphans}"
