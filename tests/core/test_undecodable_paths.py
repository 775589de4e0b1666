"""A file or directory name whose bytes are not UTF-8 is shown, never a crash.

On POSIX such a name reaches Python with each undecodable byte as a lone surrogate
(``surrogateescape``: byte 0xff is ``"\\udcff"``). No JSON, SARIF or policy input can carry one:
the embedded engine refused the document and the check ended in an internal error. A shown name
writes each such byte as ``\\xNN`` (the file is still read by its real name), and the engine
refuses any text that is not valid Unicode with a clear InputError of the pipeline, not a crash.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT

from streamwarden.core.errors import InputError
from streamwarden.engine import load_policy_set, sandbox
from streamwarden.engine.policyset import builtin_policy_files, catalog, parse_policy
from streamwarden.engine.regorus_engine import RegorusEngine

# a checkpoint interval the contract (1m) disagrees with: SW-CKPT-003 cites the deployment file
DEPLOYMENT = (
    "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: orders-enrichment\n"
    'spec:\n  flinkConfiguration:\n    execution.checkpointing.interval: "30 s"\n'
)
SHOWN_DIR = "contracts/team\\xff/p0"  # as the user sees it: the byte written as \xff


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A repository with one contract and its deployment file under ``contracts/team<0xff>/p0``."""
    (tmp_path / "contracts").mkdir()
    team = os.fsencode(tmp_path / "contracts") + b"/team\xff"
    try:
        os.mkdir(team)
    except OSError as exc:  # a file system that keeps names UTF-8 (ZFS utf8only, APFS) refuses it
        pytest.skip(f"this file system refuses a directory name that is not UTF-8: {exc}")
    pipeline = Path(os.fsdecode(team)) / "p0"
    (pipeline / "deploy").mkdir(parents=True)
    contract = CLEAN_CONTRACT.replace("job:\n", "job:\n  deployment: [deploy/cr.yaml]\n", 1)
    (pipeline / "contract.yaml").write_text(contract, encoding="utf-8")
    (pipeline / "deploy/cr.yaml").write_text(DEPLOYMENT, encoding="utf-8")
    return tmp_path


def _no_crash(p: Proc) -> None:
    assert p.code in (0, 1), p
    assert "internal error" not in p.output and "Traceback" not in p.output, p


@pytest.mark.parametrize("args", [(), ("contracts",)], ids=["config-globs", "directory-argument"])
def test_json_shows_the_byte_escaped_in_every_file_name(root: Path, args: tuple[str, ...]) -> None:
    p = sw("check", *args, "--format", "json", cwd=root)
    _no_crash(p)
    assert "\ufffd" not in p.stdout, p  # stdout is decoded with errors="replace": no byte was not UTF-8
    findings = p.json()["findings"]
    (finding,) = [f for f in findings if f["path"] == "execution.checkpointing.interval"]
    assert finding["rule"] == "SW-CKPT-003", finding
    assert (finding["file"], finding["line"]) == (f"{SHOWN_DIR}/deploy/cr.yaml", 7), finding
    assert f"at {SHOWN_DIR}/deploy/cr.yaml:7" in finding["message"], finding
    assert all("\udcff" not in json.dumps(f, ensure_ascii=False) for f in findings)


def test_text_shows_the_byte_escaped(root: Path) -> None:
    p = sw("check", "--format", "text", cwd=root)
    _no_crash(p)
    assert p.code == 1, p  # SW-CKPT-003 is an error
    assert f"{SHOWN_DIR}/contract.yaml" in p.stdout, p
    assert f"{SHOWN_DIR}/deploy/cr.yaml" in p.stdout, p
    assert "\ufffd" not in p.output, p


def test_the_stdout_is_valid_utf8(root: Path) -> None:
    p = sw("check", "--format", "sarif", cwd=root)
    _no_crash(p)
    raw = p.stdout  # decoded with errors="replace": a byte that is not UTF-8 would be U+FFFD
    assert "\ufffd" not in raw, p
    sarif = json.loads(raw)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in sarif["runs"]
        for result in run["results"]
        for loc in result.get("locations", [])
    }
    assert any("deploy/cr.yaml" in u and "ff" in u for u in uris), uris


def test_a_missing_path_argument_with_such_a_byte_is_a_clear_error(tmp_path: Path) -> None:
    p = sw("check", os.fsdecode(b"nowhere\xff.yaml"), "--format", "json", cwd=tmp_path)
    assert p.code == 2, p
    assert "internal error" not in p.output, p
    (error,) = p.json()["errors"]
    assert error["file"] == "nowhere\\xff.yaml", error
    assert "\ufffd" not in p.stdout, p


def _policy_named(directory: Path, name: bytes, source: str) -> None:
    directory.mkdir(exist_ok=True)
    try:
        with open(os.path.join(os.fsencode(directory), name), "w", encoding="utf-8") as fh:
            fh.write(source)
    except OSError as exc:
        pytest.skip(f"this file system refuses a file name that is not UTF-8: {exc}")


FIRES = """package acme.names

import rego.v1

# METADATA
# title: every pipeline has a name
# custom:
#   id: ACME-001
#   severity: error
deny contains f if {
\tinput.contract.metadata.name == "orders-enrichment"
\tf := {"rule": "ACME-001", "message": "named", "path": "metadata.name"}
}
"""


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown"])
def test_a_custom_policy_file_with_such_a_byte_in_its_name_is_shown_escaped(root: Path, fmt: str) -> None:
    """Its findings are reported (the file is read by its real name) and every format carries
    the name valid, with the byte as ``\\xff``; no internal error."""
    _policy_named(root / "pol", b"names\xff.rego", FIRES)
    p = sw("check", "--policy", "pol", "--format", fmt, cwd=root)
    assert p.code == 1, p
    assert "internal error" not in p.output and "\ufffd" not in p.output, p
    assert "ACME-001" in p.stdout, p


@pytest.mark.parametrize("verb", [("check",), ("policy", "test")])
def test_a_custom_policy_that_does_not_compile_names_its_file_escaped(root: Path, verb: tuple[str, ...]) -> None:
    _policy_named(root / "pol", b"broken\xff.rego", "package acme.broken\n\ndeny contains f if {\n\tf :=\n}\n")
    args = (*verb, "--policy", "pol") if verb == ("check",) else (*verb, "pol")
    p = sw(*args, cwd=root)
    assert p.code == 2, p
    assert "internal error" not in p.output, p
    assert "pol/broken\\xff.rego:" in p.stderr and "does not compile" in p.stderr, p


def test_a_missing_policy_directory_with_such_a_byte_is_a_clear_error(root: Path) -> None:
    p = sw("check", "--policy", os.fsdecode(b"nowhere\xff"), cwd=root)
    assert p.code == 2, p
    assert "internal error" not in p.output, p
    assert "nowhere\\xff: policy directory does not exist" in p.stderr, p


# -- the engine's boundary: any text that is not valid Unicode, wherever it comes from ----------


def _doc(error: str) -> dict[str, Any]:
    sources: dict[str, Any] = {
        s: {"available": False, "configured": False}
        for s in ("deployment", "flink", "iceberg", "data", "savepoint", "kafka")
    }
    sources["flink"] = {"configured": True, "available": False, "error": error}
    return {
        "contract": {"metadata": {"name": "orders-enrichment"}},
        "base": None,
        "facts": sources,
        "now_ms": 0,
        "environment": None,
        "mode": "check",
    }


CUSTOM = """package acme.names

import rego.v1

# METADATA
# title: a custom rule
# custom:
#   id: ACME-001
#   severity: warning
deny contains f if {
\tinput.contract.metadata.name == "nobody"
\tf := {"msg": "never"}
}
"""


def _engine(custom: bool) -> RegorusEngine:
    if not custom:
        return RegorusEngine(load_policy_set())
    if not sandbox.available():
        pytest.skip("no sandbox here (fork and resource are POSIX): custom policies run in-process")
    files = [*builtin_policy_files(), parse_policy(CUSTOM, "policies/names.rego", False)]
    engine = RegorusEngine(catalog(files))
    assert engine._guarded  # the text goes to the sandbox child as UTF-8
    return engine


def _refused(engine: RegorusEngine, doc: dict[str, Any]) -> InputError:
    # not pytest.raises: its traceback would hold the engine in a reference cycle, which the
    # collector may free on another thread (a regorus engine may only be dropped on its own)
    try:
        engine.evaluate(doc)
    except InputError as exc:
        exc.__traceback__ = None
        error = exc
    else:
        raise AssertionError("the document was evaluated")
    assert "pipeline 'orders-enrichment'" in error.message
    assert "not valid Unicode" in error.message
    assert "input.facts.flink.error" in error.message  # where the text is
    assert error.hint
    json.dumps(error.to_dict()).encode("utf-8")  # the error itself is valid Unicode
    error.render().encode("utf-8")
    return error


@pytest.mark.parametrize("custom", [False, True], ids=["in-process", "sandbox"])
def test_a_lone_surrogate_in_the_input_is_an_input_error(custom: bool) -> None:
    engine = _engine(custom)
    _refused(engine, _doc("connection refused by \udc80server"))
    # the engine is still usable: the next pipeline is evaluated
    results = engine.evaluate(_doc("connection refused"))
    rules = {e["rule"] for v in results.values() for e in v if isinstance(e, dict)}
    assert "SW-FACT-001" in rules


def test_regorus_refusing_an_escaped_surrogate_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # the text as regorus saw it before (ASCII with a \udc80 escape): its RuntimeError is mapped too
    original = RegorusEngine._evaluate_files

    def escaped(self: RegorusEngine, files: Any, text: str, packages: Any, traced: Any) -> Any:
        return original(self, files, json.dumps(json.loads(text)), packages, traced)

    monkeypatch.setattr(RegorusEngine, "_evaluate_files", escaped)
    _refused(RegorusEngine(load_policy_set()), _doc("\udc80"))
