"""A ``job.deployment`` entry naming a file that does not exist is an error finding (SW-FACT-001,
severity error) at that entry of the contract: file = the contract, line = the list item's line,
path = ``job.deployment[i]``. The other files of the list are still read, and their findings stay.
Before, the whole deployment source went unavailable with a warning: every deployment rule was
switched off and the check passed."""

from __future__ import annotations

from pathlib import Path

from tests.deployrepo import CONTRACT_FILE, check, line_of, make_repo


def test_a_missing_deployment_file_is_an_error_at_its_entry(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        ["deploy/ok.yaml", "deploy/missing.yaml"],
        {"deploy/ok.yaml": "state.backend.type: hashmap\n"},
    )
    code, findings = check(repo)
    assert code == 1
    [missing] = [f for f in findings if f["rule"] == "SW-FACT-001"]
    assert missing["severity"] == "error"
    assert missing["file"] == CONTRACT_FILE
    assert missing["line"] == line_of(repo / CONTRACT_FILE, "- deploy/missing.yaml")
    assert missing["path"] == "job.deployment[1]"
    assert "deploy/missing.yaml" in missing["message"] and "does not exist" in missing["message"]
    # ok.yaml was read all the same: its state backend contradicts the contract
    [backend] = [f for f in findings if f["rule"] == "SW-DEPLOY-005"]
    assert backend["file"] == "contracts/deploy/ok.yaml" and backend["line"] == 1


def test_a_missing_file_fails_the_check_even_when_the_rest_is_clean(tmp_path: Path) -> None:
    clean = (
        "state.backend.type: rocksdb\n"
        "execution.checkpointing.dir: s3://lake-checkpoints/orders-enrichment\n"
        "execution.checkpointing.interval: 60 s\n"
    )
    repo = make_repo(tmp_path, ["deploy/missing.sql", "deploy/ok.yaml"], {"deploy/ok.yaml": clean})
    code, findings = check(repo)
    assert code == 1
    errors = [f for f in findings if f["severity"] == "error"]
    assert [(f["rule"], f["path"]) for f in errors if f["rule"] == "SW-FACT-001"] == [
        ("SW-FACT-001", "job.deployment[0]")
    ]


def test_every_file_missing_is_one_error_per_entry_and_no_second_gap(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ["deploy/a.yaml", "deploy/b.yaml"], {})
    code, findings = check(repo)
    assert code == 1
    gaps = sorted((f["path"], f["severity"], f["line"]) for f in findings if f["rule"] == "SW-FACT-001")
    contract = repo / CONTRACT_FILE
    assert gaps == [
        ("job.deployment[0]", "error", line_of(contract, "- deploy/a.yaml")),
        ("job.deployment[1]", "error", line_of(contract, "- deploy/b.yaml")),
    ]
