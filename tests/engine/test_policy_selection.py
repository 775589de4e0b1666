"""Policy files whose METADATA says ``custom.requires: [COND, ...]`` are left out of an evaluation
when no condition holds: a static check does not evaluate the live, diff and gate rules.

Leaving a file out must never change a result. Three guards: every subset of the built-in pack
that selection can produce compiles on regorus and on the real OPA engine (a helper used across
files would otherwise be missing); every evaluation in this test suite runs with
STREAMWARDEN_SELF_CHECK=1 (tests/conftest.py), which evaluates the full pack beside the
selected one and fails on any difference; and the cases below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REPO, invoke

from streamwarden.core.errors import PolicyError
from streamwarden.core.selfcheck import SelfCheckError
from streamwarden.engine import load_policy_set
from streamwarden.engine.policyset import PolicyFile, PolicySet, condition_holds, parse_policy
from streamwarden.engine.regorus_engine import RegorusEngine, _Compiled

PACK = load_policy_set()
CONDITIONS = sorted({c for f in PACK.runtime_files for c in f.requires})


def _subsets() -> dict[tuple[str, ...], list[Any]]:
    """The pack with no condition held, with each one alone, and with all of them. Adding files
    only adds definitions, so a helper missing from any selectable subset is missing from one of
    these (the file that needs it is in, the file that has it is out); a conflict between two
    files shows in the full pack."""
    out: dict[tuple[str, ...], list[Any]] = {}
    for held in [(), *((c,) for c in CONDITIONS), tuple(CONDITIONS)]:
        files = [f for f in PACK.runtime_files if not f.requires or set(f.requires) & set(held)]
        out.setdefault(tuple(f.display for f in files), files)
    return out


def _name(f: PolicyFile) -> str:
    """policies/streamwarden/checkpoint/flink.rego -> checkpoint/flink"""
    return f.display.removeprefix("policies/streamwarden/").removesuffix(".rego")


def test_the_builtin_pack_marks_its_live_diff_and_gate_files() -> None:
    marked = {_name(f): f.requires for f in PACK.runtime_files if f.requires}
    assert marked["checkpoint/flink"] == ("facts.flink",)
    assert marked["checkpoint/sw_ckpt_001_running"] == ("facts.flink",)
    assert marked["table/lineage"] == ("facts.iceberg",)
    assert marked["data/common"] == ("facts.data",)
    assert marked["schema/common"] == ("base",)
    assert marked["recovery/gate"] == ("facts.savepoint", "mode.gate")
    assert marked["writers/sw_table_014"] == ("mode.writers",)  # once per run, on tables several contracts write
    assert marked["source/sw_src_002"] == marked["recovery/sw_rec_006_kafka"] == ("facts.kafka",)
    # the contract-only rules (a rule's own file), SW-FACT-001 and the repository-level rules are
    # always evaluated
    always = ("checkpoint/common", "checkpoint/sw_ckpt_001", "state/common", "table/common", "table/sw_table_004")
    for name in (*always, "retention/sw_ret_002", "recovery/common", "waiver/sw_waiver_001", "facts/common"):
        assert name not in marked
    assert "policy/sw_policy_001" not in marked and "lib" not in marked
    assert CONDITIONS == [
        "base",
        "facts.data",
        "facts.deployment",
        "facts.flink",
        "facts.iceberg",
        "facts.kafka",
        "facts.savepoint",
        "mode.gate",
        "mode.writers",
    ]


def test_every_selectable_subset_compiles_on_regorus() -> None:
    subsets = _subsets()
    assert len(subsets) == len(CONDITIONS) + 2
    for files in subsets.values():
        _Compiled(PACK, files)


def test_every_selectable_subset_compiles_on_opa() -> None:
    opa = pytest.importorskip("opa_bindings", reason="the real OPA engine (opa-golib-python-bindings) is not installed")
    for names, files in _subsets().items():
        eng = opa.OpaEngine()
        for f in files:
            eng.add_policy(f.display, f.source)
        eng.add_data({"catalog": {"rule_ids": sorted(PACK.known_ids)}})
        try:  # OPA compiles on the first query: an unsafe or missing helper fails here
            eng.eval_query("x := data.streamwarden")
        except opa.OpaError as exc:
            pytest.fail(
                f"the subset without {sorted(set(f.display for f in PACK.runtime_files) - set(names))} "
                f"does not compile on OPA: {exc.message}"
            )


def _doc(**facts: dict[str, Any]) -> dict[str, Any]:
    sources = {
        s: {"available": False, "configured": False}
        for s in ("deployment", "flink", "iceberg", "data", "savepoint", "kafka")
    }
    sources.update(facts)
    return {"contract": {}, "base": None, "facts": sources, "now_ms": 0, "environment": None, "mode": "check"}


@pytest.mark.parametrize(
    "condition, doc, holds",
    [
        ("facts.flink", _doc(), False),
        ("facts.flink", _doc(flink={"configured": True, "available": False, "error": "refused"}), True),
        ("facts.flink", _doc(flink={"available": True}), True),  # no `configured` key: in play
        ("facts.flink", _doc(flink={"configured": False, "available": True}), True),
        ("facts.iceberg", {"facts": {}}, False),
        ("facts.iceberg", {}, False),
        ("base", _doc(), False),
        ("base", {**_doc(), "base": {"status": "present"}}, True),
        ("mode.gate", _doc(), False),
        ("mode.gate", {**_doc(), "mode": "gate"}, True),
    ],
)
def test_conditions(condition: str, doc: dict[str, Any], holds: bool) -> None:
    assert condition_holds(condition, doc) is holds


def test_a_static_input_evaluates_only_the_unmarked_files() -> None:
    selected = {_name(f) for f in PACK.files_for(_doc())}
    assert "checkpoint/common" in selected and "facts/sw_fact_001" in selected
    assert not selected & {"checkpoint/flink", "table/iceberg", "schema/common", "recovery/gate", "deployment/common"}
    assert "data/common" not in selected and "checkpoint/sw_ckpt_001_running" not in selected
    live = {_name(f) for f in PACK.files_for(_doc(flink={"configured": True, "available": True}))}
    flink = {_name(f) for f in PACK.runtime_files if "facts.flink" in f.requires}
    assert live - selected == flink
    assert {"checkpoint/flink", "checkpoint/running", "state/sw_state_011", "retention/sw_ret_007"} <= flink


def test_a_live_finding_still_fires_through_selection() -> None:
    # SW-FACT-001 (always evaluated) and a Flink rule (selected by facts.flink) in one evaluation
    engine = RegorusEngine(PACK)
    doc = _doc(flink={"configured": True, "available": False, "error": "connection refused"})
    doc["contract"] = {"metadata": {"name": "p"}}
    rules = {e["rule"] for v in engine.evaluate(doc).values() for e in v if isinstance(e, dict)}
    assert "SW-FACT-001" in rules


def test_the_builtin_pack_is_compiled_as_the_documents_select_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without custom policies, the engine compiles no file a document does not select: a static
    check compiles the static subset only (the whole pack compiles: the tests above)."""
    monkeypatch.setenv("STREAMWARDEN_SELF_CHECK", "0")  # (self-check mode compiles the whole pack)
    engine = RegorusEngine(PACK)
    assert engine._compiled == {}
    engine.evaluate(_doc())
    (compiled,) = engine._compiled
    assert compiled == tuple(f.display for f in PACK.files_for(_doc()))
    assert len(compiled) < len(PACK.runtime_files)


def test_custom_policies_have_the_whole_set_compiled_at_once() -> None:
    """With a custom file, the whole set is compiled when the engine is made: a custom file that
    does not compile fails the run, whichever files its documents select."""
    live_only = parse_policy(
        "package acme.live\nimport rego.v1\n\n# METADATA\n# custom:\n#   requires: [facts.flink]\n"
        'deny contains {"rule": "ACME-002", "message": "failed"} if input.facts.flink.job.state == "failed"\n',
        "policies/acme/live.rego",
        builtin=False,
    )
    ps = PolicySet(files=[*PACK.files, live_only], rules=PACK.rules, known_ids={*PACK.known_ids, "ACME-002"})
    assert ps.has_custom and not PACK.has_custom
    engine = RegorusEngine(ps)
    assert tuple(f.display for f in ps.runtime_files) in engine._compiled


def test_the_verification_mode_catches_a_file_that_fires_without_its_condition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lying = parse_policy(
        "package acme.lying\nimport rego.v1\n\n# METADATA\n# custom:\n#   requires: [facts.flink]\n"
        'deny contains {"rule": "ACME-001", "message": "fires anyway"} if true\n',
        "policies/acme/lying.rego",
        builtin=False,
    )
    ps = PolicySet(files=[lying], rules={}, known_ids={"ACME-001"})
    monkeypatch.setenv("STREAMWARDEN_SELF_CHECK", "1")
    with pytest.raises(SelfCheckError, match="policy selection changed the results"):
        RegorusEngine(ps).evaluate(_doc())
    monkeypatch.setenv("STREAMWARDEN_SELF_CHECK", "0")
    assert RegorusEngine(ps).evaluate(_doc()) == {}  # as marked: not evaluated without Flink facts


@pytest.mark.parametrize(
    "value, message",
    [
        ("[]", "must be a non-empty list"),
        ("facts.flink", "must be a non-empty list"),
        ("[facts.Flink]", "unknown condition 'facts.Flink'"),
        ("[live]", "unknown condition 'live'"),
        ("[facts.flink, 3]", "unknown condition 3"),
    ],
)
def test_a_bad_requires_is_a_policy_error_with_its_line(value: str, message: str) -> None:
    source = f"package acme.x\n\n# METADATA\n# custom:\n#   requires: {value}\nx := 1\n"
    with pytest.raises(PolicyError, match=message) as err:
        parse_policy(source, "policies/acme/x.rego", builtin=False)
    assert err.value.line == 5  # the requires line


def test_the_retired_requires_comment_is_a_policy_error_with_its_line() -> None:
    with pytest.raises(PolicyError, match="no longer read: declare the conditions in METADATA") as err:
        parse_policy("package acme.x\n\n# streamwarden:requires facts.flink\n", "policies/acme/x.rego", builtin=False)
    assert err.value.line == 3 and "requires: [facts.flink]" in (err.value.hint or "")


def test_a_custom_policy_with_a_bad_requires_line_fails_the_run_with_exit_2(tmp_path: Path, runner: Any) -> None:
    from tests.conftest import CLEAN_CONTRACT

    (tmp_path / "c.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "x.rego").write_text(
        "# METADATA\n# custom:\n#   requires: [flink]\npackage acme.x\n", encoding="utf-8"
    )
    result = invoke(runner, "check", str(tmp_path / "c.yaml"), "--policy", str(tmp_path / "pol"), cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "unknown condition 'flink'" in result.output and "x.rego:3" in result.output


def test_selection_keeps_every_finding_of_the_examples(tmp_path: Path) -> None:
    # the example contracts, checked statically: the full pack and the selection agree
    from streamwarden.check.options import RunOptions
    from streamwarden.check.run import run_check
    from streamwarden.contracts.config import load_config

    root = REPO / "contracts" / "examples"
    result = run_check(
        load_config(str(root / "streamwarden.yaml"), root), RunOptions(paths=[str(root)], keep_inputs=True)
    )
    engine = RegorusEngine(result.policy_set)
    for name, doc in result.inputs.items():
        full = engine._run(engine._full, json.dumps(doc), None)
        selected = engine.evaluate(doc)
        assert {k: v for k, v in full.items() if v} == {k: v for k, v in selected.items() if v}, name
        assert len(engine.policy_set.files_for(doc)) < len(engine.policy_set.runtime_files)
