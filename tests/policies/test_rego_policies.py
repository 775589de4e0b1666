"""Every Rego unit test passes on the embedded engine AND on the real OPA engine, with coverage.

The OPA engine (opa-golib-python-bindings, the OPA Go library) is the oracle: where regorus and
OPA disagree on any test, this fails.
"""

from __future__ import annotations

import pytest

from streamwarden.engine import load_policy_set
from streamwarden.engine.testing import PolicyTestRun, run_tests

COVERAGE_TARGET = 90.0


@pytest.fixture(scope="module")
def policy_set():
    return load_policy_set()


@pytest.fixture(scope="module")
def regorus_run(policy_set) -> PolicyTestRun:
    return run_tests(policy_set, "regorus", coverage=True)


@pytest.fixture(scope="module")
def opa_run(policy_set) -> PolicyTestRun:
    pytest.importorskip("opa_bindings", reason="the real OPA engine (opa-golib-python-bindings) is not installed")
    return run_tests(policy_set, "opa-embedded", coverage=True)


def _describe(run: PolicyTestRun) -> str:
    return "\n".join(f"{r.file}:{r.line} {r.name}: {r.error or 'false'}\n{r.source}" for r in run.failed)


def test_there_are_tests_for_every_policy_file(policy_set) -> None:
    runtime = {
        f.display.removesuffix(".rego") for f in policy_set.runtime_files if f.package.startswith("streamwarden.")
    }
    tested = {f.display.removesuffix("_test.rego") for f in policy_set.files if f.is_test}
    missing = sorted(p for p in runtime if p not in tested and not p.endswith("/lib"))
    assert not missing, f"policy files without a _test.rego beside them: {missing}"


def test_all_rego_tests_pass_on_regorus(regorus_run: PolicyTestRun) -> None:
    assert len(regorus_run.results) > 50
    assert not regorus_run.failed, _describe(regorus_run)


def test_all_rego_tests_pass_on_opa(opa_run: PolicyTestRun) -> None:
    assert not opa_run.failed, _describe(opa_run)


def test_engines_agree_on_every_test(regorus_run: PolicyTestRun, opa_run: PolicyTestRun) -> None:
    reg = {(r.package, r.name): r.passed for r in regorus_run.results}
    opa = {(r.package, r.name): r.passed for r in opa_run.results}
    assert reg.keys() == opa.keys()
    disagree = sorted(k for k in reg if reg[k] != opa[k])
    assert not disagree, f"regorus and OPA disagree on: {disagree}"


def test_coverage_on_regorus(regorus_run: PolicyTestRun) -> None:
    assert regorus_run.total_coverage() >= COVERAGE_TARGET, {
        p: round(c.percent, 1) for p, c in regorus_run.coverage.items()
    }


def test_coverage_on_opa(opa_run: PolicyTestRun) -> None:
    assert opa_run.total_coverage() >= COVERAGE_TARGET, {p: round(c.percent, 1) for p, c in opa_run.coverage.items()}


def test_every_builtin_rule_has_metadata_and_a_test(policy_set) -> None:
    import re

    tests_text = "\n".join(f.source for f in policy_set.files if f.is_test)
    emitted = set()
    for f in policy_set.runtime_files:
        emitted.update(re.findall(r'"rule"\s*:\s*"(SW-[A-Z]+-\d{3})"', f.source))
    undocumented = sorted(r for r in emitted if r not in policy_set.rules)
    assert not undocumented, f"rule ids emitted without METADATA: {undocumented}"
    untested = sorted(r for r in policy_set.rules if r not in tests_text)
    assert not untested, f"rules never named in a test: {untested}"
    for rule in policy_set.rules.values():
        assert rule.title and rule.description and rule.remediation, rule.id
