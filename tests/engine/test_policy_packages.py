"""A custom policy's package is the one the Rego parser reads, not the first line that looks like
`package ...`: a custom file cannot slip into a built-in `streamwarden.*` package (an indented
package line, a second `package` inside a raw string or after a comment), and a custom rule that
emits an `SW-` id is a policy error naming its file (exit 2), whatever the package is called.
Custom packages that only look alike (`streamwarden_evil`, `streamwardenx`) are not reserved."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT

from streamwarden.core.errors import PolicyError
from streamwarden.engine.policyset import builtin_policy_files, module_package, parse_policy

FORGED = 'deny contains {"rule": "SW-CKPT-001", "message": "forged", "path": "checkpoint.interval"} if true\n'
OWN = 'deny contains {"rule": "ACME-001", "message": "own rule", "path": "checkpoint.interval"} if true\n'

# Each file claims a built-in package, or emits a reserved id, or both: exit 2 naming the file.
HOSTILE = {
    # the text scan saw `package acme.notes` (the raw string) and let the file into streamwarden.checkpoint
    "indented-package-and-raw-string": (
        "  package streamwarden.checkpoint\n\nimport rego.v1\n\nnote := `\npackage acme.notes\n`\n\n" + FORGED
    ),
    # a comment that reads as a package line, the real one indented with a tab
    "comment-then-indented-package": "# package acme.x\n\tpackage streamwarden.checkpoint\n\nimport rego.v1\n\n"
    + FORGED,
    "plain-builtin-package": "package streamwarden.checkpoint\n\nimport rego.v1\n\n" + FORGED,
    "builtin-package-by-string-key": 'package streamwarden["checkpoint"]\n\nimport rego.v1\n\n' + FORGED,
    "lookalike-package-emitting-a-reserved-id": "package streamwarden_evil\n\nimport rego.v1\n\n" + FORGED,
}

# Packages that are not reserved and rules with ids of their own: they run (exit 1, ACME-001).
FRIENDLY = {
    "lookalike-underscore": "package streamwarden_evil\n\nimport rego.v1\n\n" + OWN,
    "lookalike-suffix": "package streamwardenx.rules\n\nimport rego.v1\n\n" + OWN,
    # the text scan found no package at all (indented) and refused a good file
    "indented-after-a-comment": "# package streamwarden.checkpoint\n  package acme.pipelines\n\nimport rego.v1\n\n"
    + OWN,
    # the text scan took the raw string's line for the package and called the file reserved
    "raw-string-mentions-a-builtin-package": (
        " package acme.docs\n\nimport rego.v1\n\nhelp := `\npackage streamwarden.checkpoint\n`\n\n" + OWN
    ),
}


def _project(tmp_path: Path, policy: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "c.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "sneaky.rego").write_text(policy, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_custom_policy_cannot_claim_a_builtin_package_or_emit_a_reserved_id(tmp_path: Path, name: str) -> None:
    root = _project(tmp_path, HOSTILE[name])
    p = sw("check", "c.yaml", "--policy", "pol", "--format", "json", cwd=root)
    assert p.code == 2, p
    assert "pol/sneaky.rego" in p.stderr, p
    assert "SW-CKPT-001" not in p.stdout  # no forged finding is reported
    if name != "lookalike-package-emitting-a-reserved-id":
        assert "package streamwarden.checkpoint is reserved for the built-in policies" in p.stderr, p


def test_the_same_file_through_streamwarden_yaml_and_policy_test_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, HOSTILE["indented-package-and-raw-string"])
    (root / "streamwarden.yaml").write_text("contracts: ['c.yaml']\npolicies: ['pol']\n", encoding="utf-8")
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 2, p
    assert "pol/sneaky.rego:1" in p.stderr and "is reserved for the built-in policies" in p.stderr, p
    t = sw("policy", "test", "pol", cwd=root)
    assert t.code == 2 and "is reserved for the built-in policies" in t.stderr, t


def test_the_opa_engine_sees_the_same_packages(tmp_path: Path) -> None:
    # OPA is queried for the packages read at load time: the hostile file is refused before any
    # upload, the indented custom package is evaluated (the stand-in server runs the OPA Go engine)
    from tests.engine.test_engine_opa_server import _stand_in

    for server in _stand_in():
        hostile = _project(tmp_path / "hostile", HOSTILE["indented-package-and-raw-string"])
        p = sw("check", "c.yaml", "--policy", "pol", "--engine", "opa", "--opa-url", server.url, cwd=hostile)
        assert p.code == 2, p
        assert "pol/sneaky.rego:1" in p.stderr and "is reserved for the built-in policies" in p.stderr, p
        friendly = _project(tmp_path / "friendly", FRIENDLY["indented-after-a-comment"])
        args = ("--engine", "opa", "--opa-url", server.url, "--format", "json")
        q = sw("check", "c.yaml", "--policy", "pol", *args, cwd=friendly)
        assert q.code == 1, q
        assert [f["rule"] for f in q.json()["findings"]] == ["ACME-001"], q


@pytest.mark.parametrize("name", sorted(FRIENDLY))
def test_a_custom_package_that_only_looks_reserved_runs(tmp_path: Path, name: str) -> None:
    root = _project(tmp_path, FRIENDLY[name])
    p = sw("check", "c.yaml", "--policy", "pol", "--format", "json", cwd=root)
    assert p.code == 1, p
    rules = [f["rule"] for f in p.json()["findings"]]
    assert rules == ["ACME-001"], p


def test_module_package_reads_the_parsed_module() -> None:
    assert module_package(HOSTILE["indented-package-and-raw-string"], "x.rego") == ("streamwarden.checkpoint", 1)
    assert module_package(HOSTILE["comment-then-indented-package"], "x.rego") == ("streamwarden.checkpoint", 2)
    assert module_package(FRIENDLY["raw-string-mentions-a-builtin-package"], "x.rego") == ("acme.docs", 1)
    with pytest.raises(PolicyError, match="does not compile") as err:
        module_package("package acme.x\n\ndeny contains if {\n", "x.rego")
    assert err.value.file == "x.rego"


def test_a_package_with_a_quoted_segment_that_is_not_a_name_is_refused() -> None:
    with pytest.raises(PolicyError, match=r"package acme\[\"a.b\"\]: a package path is dotted names") as err:
        parse_policy('package acme["a.b"]\n', "pol/x.rego", builtin=False)
    assert err.value.line == 1


def test_the_builtin_packages_are_the_ones_the_parser_reads() -> None:
    # built-in files are read with the fast text scan: it must agree with the parser on every one
    for f in builtin_policy_files():
        assert module_package(f.source, f.display)[0] == f.package, f.display
