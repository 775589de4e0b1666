"""``policy test``: run every ``test_*`` rule, on regorus or on the real OPA engine, with coverage."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core.errors import PolicyError, UsageError
from streamwarden.engine import sandbox
from streamwarden.engine.limits import HINT, Limits
from streamwarden.engine.policyset import PolicyFile, PolicySet
from streamwarden.engine.rego import clean_error
from streamwarden.engine.regorus_engine import add_policies

TEST_ENGINES = ("regorus", "opa-embedded")


@dataclass
class PolicyTestResult:
    package: str
    name: str
    file: str
    line: int
    passed: bool
    error: str | None = None
    source: str = ""


@dataclass
class FileCoverage:
    file: str
    covered: set[int] = field(default_factory=set)
    not_covered: set[int] = field(default_factory=set)

    @property
    def percent(self) -> float:
        total = len(self.covered | self.not_covered)
        return 100.0 if total == 0 else 100.0 * len(self.covered) / total


@dataclass
class PolicyTestRun:
    engine: str
    results: list[PolicyTestResult]
    coverage: dict[str, FileCoverage]

    @property
    def failed(self) -> list[PolicyTestResult]:
        return [r for r in self.results if not r.passed]

    def total_coverage(self) -> float:
        covered = sum(len(c.covered) for c in self.coverage.values())
        total = sum(len(c.covered | c.not_covered) for c in self.coverage.values())
        return 100.0 if total == 0 else 100.0 * covered / total


def _tests(files: list[PolicyFile]) -> Iterator[tuple[PolicyFile, str, int, str]]:
    for f in files:
        lines = f.source.splitlines()
        for name in f.tests:
            m = re.search(rf"^{re.escape(name)}\b", f.source, re.MULTILINE)
            line = f.source[: m.start()].count("\n") + 1 if m else 0
            body = [lines[line - 1]] if line else []
            for text in lines[line:]:
                if text and not text[0].isspace():
                    if text.startswith("}"):
                        body.append(text)
                    break
                body.append(text)
            yield f, name, line, "\n".join(body)


def run_tests(
    policy_set: PolicySet, engine: str = "regorus", coverage: bool = False, limits: Limits | None = None
) -> PolicyTestRun:
    if engine == "regorus":
        return _run_regorus(policy_set, coverage, limits or Limits())
    if engine == "opa-embedded":
        return _run_opa(policy_set, coverage)
    raise UsageError(f"unknown test engine '{engine}'", hint="use one of: " + ", ".join(TEST_ENGINES))


def _data(policy_set: PolicySet) -> dict[str, Any]:
    return {"catalog": {"rule_ids": sorted(policy_set.known_ids)}}


def _run_regorus(policy_set: PolicySet, coverage: bool, limits: Limits) -> PolicyTestRun:
    """Every test rule on one regorus engine. With custom files loaded, the engine runs in a
    supervised child (engine/sandbox.py): each test under the time limit, all under the memory
    limit; a test that exceeds one, or crashes the engine, is a PolicyError naming its file."""
    import regorus

    eng = regorus.Engine()
    if coverage:
        eng.set_enable_coverage(True)
    add_policies(eng, policy_set.files)
    eng.add_data(_data(policy_set))
    tests = list(_tests(policy_set.files))

    def run_one(i: int) -> tuple[bool, str | None]:
        f, name = tests[i][0], tests[i][1]
        try:
            return eng.eval_rule(f"data.{f.package}.{name}") is True, None
        except RuntimeError as exc:
            return False, clean_error(exc)[0]

    def report() -> str:
        return str(eng.get_coverage_report_as_json())

    worker: sandbox.Sandbox | None = None
    if any(not f.builtin for f in policy_set.files) and sandbox.available():

        def serve(request: bytes) -> bytes:  # pragma: no cover - runs in the sandbox child
            ask = json.loads(request)
            if ask == "coverage":
                return report().encode("utf-8")
            return json.dumps(run_one(int(ask))).encode("utf-8")

        worker = sandbox.Sandbox(serve, limits.memory_bytes)
    results = []
    try:
        for i, (f, name, line, body) in enumerate(tests):
            if worker is None:
                ok, err = run_one(i)
            else:
                ok, err = _ask(worker, str(i), limits, f, name, line)
            results.append(PolicyTestResult(f.package, name, f.display, line, ok, err, body))
        cov: dict[str, FileCoverage] = {}
        if coverage:
            data = json.loads(report()) if worker is None else _ask(worker, '"coverage"', limits, None, "", 0)
            runtime = {f.display for f in policy_set.runtime_files}
            for entry in data.get("files", []):
                if entry["path"] in runtime:
                    cov[entry["path"]] = FileCoverage(entry["path"], set(entry["covered"]), set(entry["not_covered"]))
    finally:
        if worker is not None:
            worker.close()
    return PolicyTestRun("regorus", results, cov)


def _ask(worker: sandbox.Sandbox, request: str, limits: Limits, f: PolicyFile | None, name: str, line: int) -> Any:
    try:
        answer = json.loads(worker.call(request.encode("utf-8"), limits.timeout_s))
    except sandbox.SandboxFailure as failure:
        what = f"test data.{f.package}.{name}" if f is not None else "the coverage report"
        if failure.kind == "time":
            message = f"policy exceeded the time limit ({limits.shown_timeout()}) running {what}"
        elif failure.kind == "memory":
            message = f"policy exceeded the memory limit ({limits.shown_memory()}) running {what}"
        else:
            message = f"the engine crashed running {what}" + (f" ({failure.detail})" if failure.detail else "")
        raise PolicyError(message, file=f.display if f is not None else None, line=line or None, hint=HINT) from None
    except sandbox.RemoteError as exc:
        raise PolicyError(str(exc.info.get("message")), file=f.display if f is not None else None) from None
    if isinstance(answer, list):
        return bool(answer[0]), answer[1]
    return answer


def _run_opa(policy_set: PolicySet, coverage: bool) -> PolicyTestRun:
    try:
        from opa_bindings import OpaEngine, OpaError
    except ImportError:
        raise UsageError(
            "the real OPA engine is not installed",
            hint="pip install --ignore-requires-python opa-golib-python-bindings==0.4.4 (a test-only dependency)",
        ) from None
    eng = OpaEngine()
    for f in policy_set.files:
        try:
            eng.add_policy(f.display, f.source)
        except OpaError as exc:
            raise PolicyError(f"policy does not compile on OPA: {exc.message}", file=f.display) from None
    eng.add_data(_data(policy_set))
    results = []
    runtime = {f.display for f in policy_set.runtime_files}
    cov: dict[str, FileCoverage] = {}

    def collect() -> None:
        if not (coverage and eng.last_coverage):
            return
        for path, entry in (eng.last_coverage.get("files") or {}).items():
            if path in runtime:
                fc = cov.setdefault(path, FileCoverage(path))
                fc.covered.update(_rows(entry.get("covered")))
                fc.not_covered.update(_rows(entry.get("not_covered")))

    # OPA prepares (compiles) every distinct query: one query per package, not per test, keeps a
    # run of hundreds of tests to seconds. A package whose document errors is retried test by test.
    by_package: dict[str, list[tuple[PolicyFile, str, int, str]]] = {}
    for t in _tests(policy_set.files):
        by_package.setdefault(t[0].package, []).append(t)
    for package, tests in by_package.items():
        try:
            rs = eng.eval_query(f"x := data.{package}", coverage=coverage)
            doc = rs[0]["x"] if rs and isinstance(rs[0].get("x"), dict) else {}
            collect()
            for f, name, line, body in tests:
                results.append(PolicyTestResult(f.package, name, f.display, line, doc.get(name) is True, None, body))
        except OpaError:
            for f, name, line, body in tests:
                try:
                    ok, err = eng.eval_query(f"data.{f.package}.{name}", coverage=coverage) == [{}], None
                    collect()
                except OpaError as exc:
                    ok, err = False, exc.message
                results.append(PolicyTestResult(f.package, name, f.display, line, ok, err, body))
    for fc in cov.values():
        fc.not_covered -= fc.covered
    return PolicyTestRun("opa-embedded", results, cov)


def _rows(ranges: list[dict[str, Any]] | None) -> set[int]:
    rows: set[int] = set()
    for r in ranges or []:
        rows.update(range(r["start"]["row"], r["end"]["row"] + 1))
    return rows
