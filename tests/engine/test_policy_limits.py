"""Custom policies are bounded and deterministic (issue 16).

- A custom policy that recurses without end, allocates without bound or loops for ever stops the
  run with exit 2 naming its file (`check` and `policy test`), under `limits:` of streamwarden.yaml.
- Non-deterministic and I/O built-ins are refused at load time with file:line; a string, a
  comment, a look-alike name or an import alias mentioning them is not.
- A `# METADATA` block is read with the safe YAML loader: an alias bomb or a duplicate key is an
  error naming the policy file and line.
- The rule sets of a custom package are the ones the parser reads: an indented `deny` fires.

Every hostile case runs with low limits (1-2 s, 256 MiB) so the suite stays cheap.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT

from streamwarden.engine.policyset import builtin_policy_files

LOW_LIMITS = "limits: {policy_timeout: 2s, policy_memory: 256MiB}\n"
HEAD = "package acme.{name}\n\nimport rego.v1\n\n"
FIRES = 'deny contains {"rule": "ACME-001", "message": "fired", "path": "checkpoint.interval"} if '

RECURSION = "f(x) := y if {\n\ty := f(x + 1)\n}\n\n" + FIRES + "f(1)\n"
HUGE = FIRES + "count(numbers.range(0, 1e9)) > 0\n"
LOOP = FIRES + "{\n\tsome i in numbers.range(0, 100000)\n\tsome j in numbers.range(0, 100000)\n\ti + j < 0\n}\n"
GOOD = FIRES + "true\n"


def _project(tmp_path: Path, files: dict[str, str], config: str = LOW_LIMITS) -> Path:
    (tmp_path / "c.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    (tmp_path / "streamwarden.yaml").write_text("contracts: ['c.yaml']\npolicies: ['pol']\n" + config, encoding="utf-8")
    (tmp_path / "pol").mkdir()
    for name, body in files.items():
        (tmp_path / "pol" / f"{name}.rego").write_text(HEAD.format(name=name) + body, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (RECURSION, "the engine crashed evaluating pipeline 'orders-enrichment' (package acme.hostile)"),
        (HUGE, "policy exceeded the memory limit (256MiB) evaluating pipeline 'orders-enrichment'"),
        (LOOP, "policy exceeded the time limit (2s) evaluating pipeline 'orders-enrichment'"),
    ],
    ids=["recursion", "allocation", "endless-loop"],
)
def test_a_runaway_custom_policy_is_exit_2_naming_its_file(tmp_path: Path, body: str, says: str) -> None:
    # before: SIGSEGV (exit 139, no message), an abort on a 24 GB allocation, a loop that never ends
    root = _project(tmp_path, {"good": GOOD, "hostile": body})
    started = time.monotonic()
    p = sw("check", "--format", "json", cwd=root, timeout=60)
    assert time.monotonic() - started < 30, p
    assert p.code == 2, p
    assert says in p.stderr, p
    assert "pol/hostile.rego" in p.stderr and "pol/good.rego" not in p.stderr, p  # the culprit, not the other


def test_the_same_limits_hold_in_policy_test(tmp_path: Path) -> None:
    tests = (
        "test_loops if {\n\tsome i in numbers.range(0, 100000)\n\tsome j in numbers.range(0, 100000)\n\ti + j < 0\n}\n"
    )
    root = _project(tmp_path, {"loop_test": tests})
    started = time.monotonic()
    p = sw("policy", "test", "pol", "--no-builtin", cwd=root, timeout=60)
    assert time.monotonic() - started < 30, p
    assert p.code == 2, p
    assert "pol/loop_test.rego:5: policy exceeded the time limit (2s) running test data.acme.loop_test.test_loops" in (
        p.stderr
    ), p
    (root / "pol" / "loop_test.rego").unlink()
    (root / "pol" / "rec_test.rego").write_text(
        HEAD.format(name="rec_test") + "f(x) := y if {\n\ty := f(x + 1)\n}\n\ntest_rec if f(1)\n", encoding="utf-8"
    )
    p = sw("policy", "test", "pol", "--no-builtin", cwd=root, timeout=60)
    assert p.code == 2 and "pol/rec_test.rego:9: the engine crashed running test data.acme.rec_test.test_rec" in (
        p.stderr
    ), p


def test_limits_are_set_in_streamwarden_yaml_and_a_well_behaved_policy_runs(tmp_path: Path) -> None:
    root = _project(tmp_path, {"good": GOOD}, config="limits: {policy_timeout: 5s, policy_memory: 512MiB}\n")
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 1, p
    assert [f["rule"] for f in p.json()["findings"]] == ["ACME-001"]
    t = sw("policy", "test", "pol", "--no-builtin", cwd=root)
    assert t.code == 2 and "no test_* rules found" in t.stderr, t  # loaded and run, nothing to test
    (root / "streamwarden.yaml").write_text("contracts: ['c.yaml']\nlimits: {policy_memory: 2GB}\n", encoding="utf-8")
    bad = sw("check", "--format", "json", cwd=root)
    assert bad.code == 2 and "streamwarden.yaml:2" in bad.stderr and "policy_memory" in bad.stderr, bad


FORBIDDEN = {
    "time.now_ns": "time.now_ns() > 0",
    "rand.intn": 'rand.intn("seed", 10) > 3',
    "uuid.rfc4122": 'uuid.rfc4122("x") != ""',
    "http.send": 'http.send({"method": "GET", "url": "http://example.com"}).status_code == 200',
    "net.lookup_ip_addr": 'count(net.lookup_ip_addr("example.com")) > 0',
    "opa.runtime": "opa.runtime().env != {}",
}


@pytest.mark.parametrize("name", sorted(FORBIDDEN))
def test_a_non_deterministic_or_io_builtin_is_refused_at_load_time(tmp_path: Path, name: str) -> None:
    root = _project(tmp_path, {"nd": "\n" + FIRES + "{\n\t" + FORBIDDEN[name] + "\n}\n"})
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 2, p
    assert f"pol/nd.rego:7: `{name}` is not allowed in a policy" in p.stderr, p
    t = sw("policy", "test", "pol", "--no-builtin", cwd=root)
    assert t.code == 2 and f"pol/nd.rego:7: `{name}` is not allowed" in t.stderr, t


def test_strings_comments_lookalikes_and_aliases_are_not_refused(tmp_path: Path) -> None:
    lib = "send(x) := x\n\nintn(x) := x\n"
    uses = (
        "import data.acme.myhttp\nimport data.acme.myhttp as rand\n\n"
        "# http.send and time.now_ns() are not used here\n"
        'note := `http.send({}) uuid.rfc4122("x")`\n'
        'other := "net.lookup_ip_addr(\\"x\\")"\n'
        "rand_x := 1\n\n" + FIRES + "{\n\tmyhttp.send(1) == rand.intn(1)\n\trand_x == 1\n}\n"
    )
    root = _project(tmp_path, {"myhttp": lib, "uses": uses})
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 1, p
    assert [f["rule"] for f in p.json()["findings"]] == ["ACME-001"]


def test_the_builtin_policies_use_no_forbidden_builtin() -> None:
    from streamwarden.engine.policyset import forbidden_calls

    for f in builtin_policy_files():
        assert forbidden_calls(f.source, f.display) == [], f.display


def test_a_metadata_alias_bomb_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    # before: expanded in full (a 1 KB block of 9 levels cost 25 s and 3 GB); 6 levels keep the
    # test cheap either way
    levels = ["# a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 7):
        levels.append(f"# a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    block = "# METADATA\n# title: bomb\n" + "\n".join(levels) + "\n# custom: {id: ACME-001, severity: error}\n"
    root = _project(tmp_path, {"bomb": block + GOOD})
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 2, p
    assert "pol/bomb.rego:" in p.stderr and "METADATA block: more than 100 alias references" in p.stderr, p


def test_a_metadata_duplicate_key_is_refused_naming_its_line(tmp_path: Path) -> None:
    block = "# METADATA\n# title: first\n# custom:\n#   id: ACME-001\n#   id: ACME-002\n#   severity: error\n"
    root = _project(tmp_path, {"dup": block + GOOD})
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 2, p
    assert "pol/dup.rego:9: METADATA block: duplicate key 'id' (first at line 8)" in p.stderr, p


@pytest.mark.parametrize("indent", ["  ", "\t"], ids=["spaces", "tab"])
def test_an_indented_deny_in_a_custom_policy_fires(tmp_path: Path, indent: str) -> None:
    # before: the rule-set scan only saw `deny` at the start of a line: never evaluated, exit 0
    root = _project(tmp_path, {"indented": indent + GOOD})
    p = sw("check", "--format", "json", cwd=root)
    assert p.code == 1, p
    assert [f["rule"] for f in p.json()["findings"]] == ["ACME-001"]


def test_in_a_pull_request_the_limits_are_the_trusted_refs(tmp_path: Path) -> None:
    """The trusted ref's policies run under the trusted ref's bounds: a pull request that raises
    `limits:` (or deletes them) does not let the base's runaway policy run longer."""
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    _project(repo.path, {"hostile": LOOP}, config="limits: {policy_timeout: 1s, policy_memory: 256MiB}\n")
    repo.commit("base: a slow custom policy under a 1 s limit")
    repo.branch("feature")
    config = (repo.path / "streamwarden.yaml").read_text().replace("policy_timeout: 1s", "policy_timeout: 1h")
    repo.write("streamwarden.yaml", config)
    repo.commit("raise the limit")
    started = time.monotonic()
    p = sw("check", "--base", "main", "--format", "json", cwd=repo.path, timeout=120)
    assert time.monotonic() - started < 60, p
    assert p.code == 2, p
    assert "time limit (1s)" in p.stderr, p
