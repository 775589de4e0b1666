"""A file named by ``job.deployment`` that cannot be read is an error finding (SW-FACT-001) at
that entry of the contract: invalid YAML, a path outside the repository, an unknown file type, a
path that is not a regular file. The other files are still read and judged. Before, any of these
made the whole deployment source unavailable with a *warning* and exit 0: a pull request could
switch every deployment rule off by adding one broken file to the list."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.deployrepo import CONTRACT_FILE, check, line_of, make_repo

# contradicts the clean contract (rocksdb): SW-DEPLOY-005 proves the file was read and judged
GOOD = {"deploy/ok.yaml": "state.backend.type: hashmap\n"}


BROKEN = {
    "invalid-yaml": ("deploy/broken.yaml", {"deploy/broken.yaml": "state.backend.type: [rocksdb\n"}, "YAML"),
    "unknown-type": ("deploy/flink.properties", {"deploy/flink.properties": "state.backend.type=rocksdb\n"}, ".sql"),
    "outside": ("../../outside.yaml", {}, "outside the repository"),
    "directory": ("deploy/adir", {"deploy/adir/x.yaml": "a: b\n"}, "not a regular file"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_an_unreadable_file_is_an_error_at_its_entry_and_the_others_are_judged(tmp_path: Path, case: str) -> None:
    entry, files, reason = BROKEN[case]
    if case == "outside":
        (tmp_path / "outside.yaml").write_text("state.backend.type: rocksdb\n")
    repo = make_repo(tmp_path / "repo", ["deploy/ok.yaml", entry], {**GOOD, **files})
    code, findings = check(repo)
    assert code == 1
    gaps = [f for f in findings if f["rule"] == "SW-FACT-001"]
    assert len(gaps) == 1, gaps
    [gap] = gaps
    assert gap["severity"] == "error"
    assert gap["path"] == "job.deployment[1]"
    assert gap["file"] == CONTRACT_FILE
    assert gap["line"] == line_of(repo / CONTRACT_FILE, f"- {entry}")
    assert reason in gap["message"], gap["message"]
    # the readable file is still read and judged
    [backend] = [f for f in findings if f["rule"] == "SW-DEPLOY-005"]
    assert backend["file"] == "contracts/deploy/ok.yaml" and backend["line"] == 1


def test_invalid_yaml_names_its_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", ["deploy/broken.yaml"], {"deploy/broken.yaml": "a: 1\nb: 2\nc: [x\n"})
    code, findings = check(repo)
    assert code == 1
    [gap] = [f for f in findings if f["rule"] == "SW-FACT-001"]
    assert gap["severity"] == "error" and gap["path"] == "job.deployment[0]"
    assert "contracts/deploy/broken.yaml:" in gap["message"]
    # nothing else to read: no second, source-wide gap
    assert not [f for f in findings if f.get("path") == "facts.deployment"]


def test_an_unreadable_file_and_a_missing_file_are_each_reported(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo", ["deploy/gone.yaml", "deploy/x.txt", "deploy/ok.yaml"], {**GOOD, "deploy/x.txt": "hello\n"}
    )
    code, findings = check(repo)
    assert code == 1
    gaps = sorted((f["path"], f["severity"]) for f in findings if f["rule"] == "SW-FACT-001")
    assert gaps == [("job.deployment[0]", "error"), ("job.deployment[1]", "error")]
    assert [f["rule"] for f in findings if f["rule"] == "SW-DEPLOY-005"] == ["SW-DEPLOY-005"]
