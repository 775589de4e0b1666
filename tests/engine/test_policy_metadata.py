"""What the engine and the verbs know about a policy comes from its METADATA, never from Python:
``custom.requires`` (which inputs a file can fire on) and ``custom.kind`` (``diff``: the rule
compares the base with the head). METADATA is read with the safe YAML loader."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from streamwarden.core.errors import PolicyError
from streamwarden.engine import load_policy_set
from streamwarden.engine.policyset import PolicyFile, catalog, parse_policy
from streamwarden.evaluate.review import diff_rules

PACK = load_policy_set()

GOOD_RULE = 'deny contains {"rule": "ACME-001", "message": "m"} if false\n'


def _custom(source: str, name: str = "x") -> PolicyFile:
    return parse_policy(source, f"policies/acme/{name}.rego", builtin=False)


def test_the_builtin_diff_rules_are_the_ones_that_compare_base_and_head() -> None:
    # every SW-SCHEMA rule but SW-SCHEMA-008 (the live table against the contract, not a change),
    # the state, waiver and backfill rules on the base, the stateless upgrade, the policy-change
    # rule, the change of the files job.deployment names, the promises to consumers weakened and a
    # second writer of a table (breaking in the pull request that adds it)
    schema = {f"SW-SCHEMA-{n:03d}" for n in (1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12)}
    others = {
        "SW-STATE-006",
        "SW-STATE-007",
        "SW-STATE-008",
        "SW-STATE-013",
        "SW-WAIVER-002",
        "SW-REC-004",
        "SW-POLICY-001",
        "SW-DEPLOY-006",
        "SW-REC-008",
        "SW-TABLE-014",
    }
    assert PACK.diff_rule_ids() == schema | others
    assert PACK.is_diff_rule("SW-SCHEMA-001") and not PACK.is_diff_rule("SW-SCHEMA-008")
    assert not PACK.is_diff_rule("SW-CKPT-001") and not PACK.is_diff_rule("NOPE-1")
    assert all(PACK.rules[r].kind == "" for r in PACK.rules if r not in PACK.diff_rule_ids())


def test_the_builtin_pack_declares_requires_only_in_metadata() -> None:
    for f in PACK.files:
        assert "# streamwarden:requires" not in f.source, f.display
    declaring = {f.display.removeprefix("policies/streamwarden/") for f in PACK.runtime_files if f.requires}
    assert declaring >= {"schema/common.rego", "removal/sw_schema_011.rego", "state/diff.rego"}


def test_no_builtin_package_has_two_package_scoped_blocks() -> None:
    # OPA attaches a block above `package` to the whole package and refuses a second one in
    # another file of the same package: the pack's packages span files, so their blocks sit above
    # the first rule, and a block above `package` appears only in a package of one file
    scoped: dict[str, list[str]] = {}
    for f in PACK.files:
        for block in f.metadata:
            if block.head == "package":
                scoped.setdefault(f.package, []).append(f.display)
    for package, files in scoped.items():
        assert len(files) == 1, (package, files)
        assert len({f.display for f in PACK.runtime_files if f.package == package}) == 1, package


@pytest.mark.parametrize(
    "source",
    [
        # a block of its own above the first rule
        "package acme.x\nimport rego.v1\n\n# METADATA\n# custom:\n#   requires: [facts.flink, base]\n" + GOOD_RULE,
        # above `package` (a package of one file)
        "# METADATA\n# custom:\n#   requires: [facts.flink, base]\npackage acme.x\nimport rego.v1\n" + GOOD_RULE,
        # in a rule's own block, beside its id
        "package acme.x\nimport rego.v1\n\n# METADATA\n# title: t\n# custom:\n#   id: ACME-001\n"
        "#   requires: [facts.flink, base, facts.flink]\n" + GOOD_RULE,
    ],
    ids=["above-first-rule", "above-package", "in-a-rule-block"],
)
def test_requires_is_read_from_a_metadata_block(source: str) -> None:
    f = _custom(source)
    assert f.requires == ("facts.flink", "base")
    assert catalog([f]).files[0].requires == ("facts.flink", "base")


def test_a_file_without_requires_is_always_evaluated() -> None:
    f = _custom("package acme.x\nimport rego.v1\n\n# METADATA\n# custom:\n#   id: ACME-001\n" + GOOD_RULE)
    assert f.requires == ()


def test_requires_declared_twice_in_one_file_is_an_error() -> None:
    block = "# METADATA\n# custom:\n#   requires: [base]\n"
    with pytest.raises(PolicyError, match="declared twice") as err:
        _custom("package acme.x\nimport rego.v1\n\n" + block + "x := 1\n\n" + block + "y := 2\n")
    assert err.value.line == 11


def test_a_builtin_block_may_hold_only_requires_but_nothing_else_without_an_id() -> None:
    ok = parse_policy(
        "package streamwarden.x\nimport rego.v1\n\n# METADATA\n# custom:\n#   requires: [base]\nx := 1\n",
        "policies/streamwarden/x.rego",
        builtin=True,
    )
    assert catalog([ok]).rules == {}
    bad = parse_policy(
        "package streamwarden.x\nimport rego.v1\n\n# METADATA\n# title: t\n# custom:\n#   requires: [base]\nx := 1\n",
        "policies/streamwarden/x.rego",
        builtin=True,
    )
    with pytest.raises(PolicyError, match=r"METADATA without custom\.id"):
        catalog([bad])


def test_a_custom_rule_of_kind_diff_is_a_diff_rule() -> None:
    f = _custom(
        "package acme.x\nimport rego.v1\n\n# METADATA\n# title: t\n# custom:\n#   id: ACME-001\n#   kind: diff\n"
        + GOOD_RULE
    )
    ps = catalog([f])
    assert ps.diff_rule_ids() == {"ACME-001"} and ps.is_diff_rule("ACME-001")
    assert ps.rules["ACME-001"].kind == "diff"


def test_an_unknown_kind_is_an_error_at_its_line() -> None:
    f = _custom(
        "package acme.x\nimport rego.v1\n\n# METADATA\n# title: t\n# custom:\n#   id: ACME-001\n#   kind: Diff\n"
        + GOOD_RULE
    )
    with pytest.raises(PolicyError, match=r"unknown custom\.kind 'Diff' for ACME-001") as err:
        catalog([f])
    assert err.value.line == 8


@pytest.mark.parametrize("key", ["severity", "kind", "requires"])
def test_a_duplicate_metadata_key_is_an_error_not_the_last_one(key: str) -> None:
    values = {"severity": ("error", "info"), "kind": ("diff", "diff"), "requires": ("[base]", "[facts.flink]")}
    first, second = values[key]
    source = (
        "package acme.x\nimport rego.v1\n\n# METADATA\n# title: t\n# custom:\n#   id: ACME-001\n"
        f"#   {key}: {first}\n#   {key}: {second}\n" + GOOD_RULE
    )
    with pytest.raises(PolicyError, match=f"duplicate key '{key}'") as err:
        catalog([_custom(source)])
    assert err.value.line == 9


def test_diff_reads_the_diff_rules_from_the_run_policy_set() -> None:
    assert diff_rules(SimpleNamespace(policy_set=PACK)) == PACK.diff_rule_ids()
    assert diff_rules(SimpleNamespace(policy_set=None)) == set()
