"""``--format json`` writes its indentation itself (report/json_format.indented) and leaves the
values to CPython's C encoder: its text must be ``json.dumps(doc, indent=2, ensure_ascii=False)``
byte for byte, on real reports and on anything a finding's evidence can hold."""

from __future__ import annotations

import enum
import json
import random
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CLEAN_CONTRACT, TESTS
from tests.reporting import EXAMPLES, make_finding, run_check

from streamwarden.core.escape import json_text
from streamwarden.report import Report
from streamwarden.report.json_format import JsonReporter, indented

GOLDEN = TESTS / "golden" / "check.json"
HOSTILE = [
    "",
    "</script><!--",
    "line\nbreak\r\ttab",
    "\x00\x01\x1f\x7f\x80\x9f",
    "\u2028\u2029\u202e\u2066",
    "é ß 中文 😀 \U0010ffff",
    "\ud800 lone surrogate",
    '"quoted" \\back\\slash',
    "::error::x ##[group]",
    "null",
    '": null',
    "\n  ",
]


def slow(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False)


def same(doc: Any) -> None:
    assert indented(doc) == slow(doc)


def test_the_golden_report_and_a_real_run_read_as_json_dumps_writes_them(tmp_path: Path) -> None:
    golden = GOLDEN.read_text(encoding="utf-8")
    assert json_text(indented(json.loads(golden))) + "\n" == golden
    # (not tests.benchmarks.bench_check.generate: importing it turns self-check mode off)
    variants = [
        ("min_pause: 30s", "min_pause: 90s"),
        ("backend: rocksdb", "backend: hashmap"),
        ("owner: payments-data", 'owner: ""'),
    ]
    for i in range(30):
        text = CLEAN_CONTRACT.replace("orders-enrichment", f"pipeline-{i:02d}")
        for old, new in variants[: i % 4]:
            text = text.replace(old, new)
        (tmp_path / "contracts").mkdir(exist_ok=True)
        (tmp_path / "contracts" / f"p{i:02d}.yaml").write_text(text, encoding="utf-8")
    result = run_check(str(tmp_path / "contracts"), "--format", "json", "--no-cache")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["summary"]["pipelines"] == 30
    assert json_text(slow(json.loads(result.stdout))) + "\n" == result.stdout
    result = run_check(*EXAMPLES, "--format", "json")
    assert json_text(slow(json.loads(result.stdout))) + "\n" == result.stdout


def test_a_report_of_1000_pipelines_with_hostile_values_is_json_dumps_byte_for_byte() -> None:
    rng = random.Random(17)
    findings = []
    for i in range(1000):
        for j in range(rng.randint(0, 3)):
            evidence: dict[str, Any] = {
                "contract": rng.choice([61000, -1, 0, 2**70, 1.5, -0.0, True, None, rng.choice(HOSTILE)]),
                rng.choice(HOSTILE) + f"key{j}": rng.choice(HOSTILE),
            }
            if rng.random() < 0.3:
                evidence["nested"] = {"list": [1, "two", [], {}, {"deep": [None, False]}], "empty": {}}
            f = make_finding(
                pipeline=f"pipeline-{i:04d}" + rng.choice(HOSTILE),
                message=rng.choice(HOSTILE) * 2,
                file=rng.choice([None, f"contracts/p{i}/contract.yaml"]),
                line=rng.choice([None, 1, 42]),
                evidence=evidence,
                fingerprint=f"{i:016x}",
            )
            if rng.random() < 0.1:
                f.waived = True
                f.waiver = {"reason": rng.choice(HOSTILE), "expires": "2027-01-01", "approver": None}
            if rng.random() < 0.1:
                f.baselined = True
            findings.append(f)
    report = Report(findings=findings, pipelines=[f"pipeline-{i:04d}" for i in range(1000)])
    doc = {
        "version": 1,
        "summary": report.summary,
        "findings": [f.to_dict() for f in report.findings],
        "errors": [],
    }
    assert JsonReporter().render(report) == json_text(slow(doc)) + "\n"


class Level(enum.IntEnum):
    LOW = 1


class Text(str):
    pass


@pytest.mark.parametrize(
    "doc",
    [
        {},
        [],
        "s",
        0,
        None,
        {"a": {}, "b": [], "c": [[]], "d": [{}], "e": {"f": {}}},
        {"nan": float("nan"), "inf": [float("inf"), float("-inf")], "x": 1e300, "y": -0.0, "z": 1e-7},
        {h: [h, {h: h}] for h in HOSTILE},
        {"t": (1, ("a", {"b": (None,)}))},
        {"k": None, "null": {"null": None}},
        [None, [None, {"a": None}], None],
        # what the fast writer hands to json.dumps: other types, subclasses, other keys
        {1: "int key", "1": {"nested": True}},
        {"a": {2.5: 1, None: 2, True: 3}},
        {"a": Level.LOW, "b": [Level.LOW]},
        {"a": Text("x"), "b": {"c": Text("y")}},
        {Text("k"): {"v": 1}},
    ],
)
def test_edge_values_read_as_json_dumps_writes_them(doc: Any) -> None:
    same(doc)


def test_deep_nesting_and_cycles_behave_as_json_dumps() -> None:
    deep: list[Any] = []
    node = deep
    for _ in range(200):
        node.append({"k": []})
        node = node[0]["k"]
    same(deep)
    cycle: dict[str, Any] = {}
    cycle["self"] = [cycle]
    with pytest.raises(ValueError, match="Circular reference"):
        slow(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        indented(cycle)
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented({"a": {"b": object()}})


def test_random_documents_read_as_json_dumps_writes_them() -> None:
    rng = random.Random(3)

    def value(depth: int) -> Any:
        kind = rng.randrange(9 if depth < 5 else 6)
        if kind == 0:
            return rng.choice(HOSTILE) + rng.choice(HOSTILE)
        if kind == 1:
            return rng.choice([0, -7, 2**64, 10**30])
        if kind == 2:
            return rng.choice([0.1, -2.5, 1e21, float("nan")])
        if kind == 3:
            return rng.choice([True, False])
        if kind in (4, 5):
            return None if kind == 4 else rng.choice(HOSTILE)
        if kind == 6:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        if kind == 7:
            return tuple(value(depth + 1) for _ in range(rng.randrange(3)))
        return {rng.choice(HOSTILE) + str(i): value(depth + 1) for i in range(rng.randrange(5))}

    for _ in range(3000):
        same(value(0))


@pytest.mark.parametrize("message", ["::error::x ##[group] </", "ascii only", "del \x7f ##[", "c1 \x85 ##[", "é ##["])
def test_the_log_escapes_are_json_text_s_on_ascii_reports_too(message: str) -> None:
    report = Report(findings=[make_finding(message=message, evidence={"v": message})], pipelines=["p"])
    doc = {"version": 1, "summary": report.summary, "findings": [f.to_dict() for f in report.findings], "errors": []}
    assert JsonReporter().render(report) == json_text(slow(doc)) + "\n"


@pytest.mark.parametrize(
    "fields",
    [
        {"line": True},  # bool is an int: json writes true
        {"file": None, "line": None, "evidence": {}},
        {"evidence": {"a": [1, {"b": None}], "c": {}}, "waived": True, "waiver": {"reason": "r", "until": None}},
        {"baselined": True},
        {"title": Text("a str subclass")},  # not the model's type: json.dumps writes the report
        {"evidence": {1: "an int key"}},
        {"line": 2.5, "file": 7},
        {"message": "\ud800 lone", "remediation": "line one\n\nline two"},
    ],
)
def test_a_finding_of_any_field_types_reads_as_json_dumps_writes_it(fields: dict[str, Any]) -> None:
    """The findings are written from their fields (not from a dict per finding): any type a field
    holds gives json.dumps's text, the model's through the fast path, others through json.dumps."""
    findings = [make_finding(**fields), make_finding(pipeline="q", rule="SW-X-001")]
    report = Report(findings=findings, pipelines=["p", "q"])
    doc = {"version": 1, "summary": report.summary, "findings": [f.to_dict() for f in report.findings], "errors": []}
    assert JsonReporter().render(report) == json_text(slow(doc)) + "\n"
    empty = Report(findings=[], pipelines=["p"])
    doc = {"version": 1, "summary": empty.summary, "findings": [], "errors": []}
    assert JsonReporter().render(empty) == json_text(slow(doc)) + "\n"
