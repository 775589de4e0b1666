"""The README's "Adopt it on your repository" path, run as written: in a real git repository holding
a real Flink deployment file (the Flink Kubernetes Operator's example, from the deployment corpus),
every command of its console blocks runs through the real CLI and prints the lines the README shows,
and every YAML block is applied to the file its first line names, as a reader would edit it. So the
README cannot drift from what streamwarden does."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import yaml
from tests.cli import Proc, sw
from tests.conftest import REPO
from tests.gitrepo import Repo

DEPLOYMENT = REPO / "tests/fixtures/deploy-corpus/apache__flink-kubernetes-operator/examples/basic-checkpoint-ha.yaml"
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Adopt it on your repository\n")
    return text[start : text.index("\n## ", start + 1)]


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(section())]


def commands(block: str) -> list[tuple[str, list[str]]]:
    """Each ``$ command`` of a console block, with the output lines the README shows under it."""
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return out


def shows(proc: Proc, expected: list[str]) -> None:
    """Every line the README shows is a line of the output; one ending `[...]` is cut there."""
    lines = proc.output.splitlines()
    for want in expected:
        if want.endswith(" [...]"):
            prefix = want[: -len(" [...]")]
            assert any(line.startswith(prefix) for line in lines), (want, proc)
        else:
            assert want in lines, (want, proc)


def splice(path: Path, snippet: str) -> None:
    """Apply a YAML block: each of its sections (a line at the block's least indentation, with what
    is below it) replaces the section of the same first line in the file; a new one goes after the
    section before it in the block."""
    body = [line for line in snippet.splitlines() if not line.startswith("#")]
    indent = min(len(line) - len(line.lstrip()) for line in body if line.strip())
    parts: list[list[str]] = []
    for line in body:
        if line.strip() and len(line) - len(line.lstrip()) == indent:
            parts.append([line])
        else:
            parts[-1].append(line)
    lines = path.read_text(encoding="utf-8").splitlines()
    after = len(lines)
    for part in parts:
        if part[0] not in lines:
            lines[after:after] = part
            after += len(part)
            continue
        start = lines.index(part[0])
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        lines[start:end] = part
        after = start + len(part)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(repo: Repo, command: str) -> Proc:
    argv = shlex.split(command)
    if argv[0] == "streamwarden":
        return sw(*argv[1:], cwd=repo.path)
    assert argv[0] == "git", command
    return Proc(subprocess.run(argv, cwd=repo.path, capture_output=True, timeout=60, check=False))


def test_the_readme_adoption_path_runs_as_written(tmp_path: Path) -> None:
    text = section()
    assert "`basic-checkpoint-ha.yaml`" in text and "`deploy/state-machine.yaml`" in text
    repo = Repo(tmp_path / "repo")
    (repo.path / "deploy").mkdir()
    shutil.copy(DEPLOYMENT, repo.path / "deploy" / "state-machine.yaml")
    repo.commit("The Flink job")
    kinds = [kind for kind, _ in blocks()]
    assert kinds == ["console", "yaml", "console", "yaml", "console", "yaml"], kinds
    (_, init), (_, contract_edit), (_, check), (_, deployment_edit), (_, pull_request), (_, workflow) = blocks()

    # 1. init: a contract with TODOs
    ((command, expected),) = commands(init)
    p = run(repo, command)
    assert p.code == 0, p
    shows(p, expected)
    contract = repo.path / "contracts" / "state-machine.yaml"
    assert "TODO(owner)" in contract.read_text(encoding="utf-8")

    # 2. the TODOs filled in, and the promises written down
    assert contract_edit.splitlines()[0] == "# contracts/state-machine.yaml"
    splice(contract, contract_edit)
    written = yaml.safe_load(contract.read_text(encoding="utf-8"))
    for key, value in yaml.safe_load(contract_edit).items():
        assert written[key] == value, key
    assert not re.search(r"TODO\(\w+\)", contract.read_text(encoding="utf-8"))  # every marker filled

    # 3. schema evolution: the section init wrote, with its defaults
    assert written["schema_evolution"] == {
        "compatibility": "backward",
        "allow_renames": False,
        "coordinate_with_state": False,
        "protect_consumers": True,
    }
    assert "`protect_consumers: true`" in text and "`compatibility: backward`" in text

    # 4. validate, check: the findings on the deployment file; then the deployment fixed
    (validate, validate_shows), (check_command, check_shows) = commands(check)
    p = run(repo, validate)
    assert p.code == 0, p
    shows(p, validate_shows)
    p = run(repo, check_command)
    assert p.code == 1, p
    shows(p, check_shows)
    assert deployment_edit.splitlines()[0] == "# deploy/state-machine.yaml"
    splice(repo.path / "deploy" / "state-machine.yaml", deployment_edit)
    assert "and `streamwarden check` passes (exit 0)" in text
    p = run(repo, "streamwarden check")
    assert p.code == 0 and "1 pipeline: 1 passed, 0 errors, 0 warnings, 0 waived" in p.stdout, p
    assert "Commit both files" in text
    repo.commit("A contract for state-machine")

    # 5. a pull request that removes a column the consumers read
    assert "delete the `rule` column from `table.schema`" in text
    (switch, _), (commit, _), (check_base, base_shows) = commands(pull_request)
    assert run(repo, switch).code == 0
    lines = contract.read_text(encoding="utf-8").splitlines(keepends=True)
    (rule,) = [line for line in lines if "name: rule," in line]
    contract.write_text("".join(line for line in lines if line is not rule), encoding="utf-8")
    p = run(repo, commit)
    assert p.code == 0, p
    p = run(repo, check_base)
    assert p.code == 1, p
    shows(p, base_shows)
    assert "`streamwarden diff --base main`" in text
    p = run(repo, "streamwarden diff --base main")
    assert p.code == 1 and "🔴 breaking" in p.stdout and "| alerting |" in p.stdout, p

    # 6. the workflow: the reusable workflow of this repository, pinned by commit
    assert "`.github/workflows/streamwarden.yml`" in text
    job = yaml.safe_load(workflow)["jobs"]["streamwarden"]
    path, _, sha = job["uses"].partition("@")
    assert path.endswith("/.github/workflows/streamwarden.yml")
    assert (REPO / ".github/workflows/streamwarden.yml").is_file()
    assert re.fullmatch(r"[0-9a-f]{40}", sha.split()[0]) and job["with"]["install"].endswith(f"@{sha.split()[0]}")
