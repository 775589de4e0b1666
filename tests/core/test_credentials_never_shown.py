"""A credential written into a contract or a deployment file is never shown: the findings that quote
it (every report format), ``facts``, ``diff``, the messages that cut a long value, and ``init``,
which writes it masked into the contract it derives. A credential is what the scrubber recognises
without being told (``user:password@`` in a URL, a ``password=`` pair, an Azure ``AccountKey=``),
and a catalog property of ``streamwarden.yaml`` named like one (``adls.connection-string``) is
never printed in the rollback command of ``evidence``.

Each test fails on a build that shows the secret: the reports wrote the contract's value as it was,
a message cut the value before scrubbing it, ``init`` copied the URL, ``evidence`` printed the
connection string."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo
from tests.recovery_repo import RecoveryRepo

from streamwarden.report import FORMATS

PASSWORD = "Sup3rS3cretPassw0rdThatIsQuiteLong1234567890abcdef"
SECRET_STORAGE = f"file://admin:{PASSWORD}@/tmp/ckpt"


def _repo(root: Path, contract: str) -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(contract)
    return root


def _no_secret(text: str) -> None:
    assert PASSWORD[:9] not in text, text  # nor a prefix: a cut must not leave the first part


@pytest.fixture
def leaky(tmp_path: Path) -> Path:
    """The clean contract with its checkpoint storage on the local file system, behind a password
    (SW-CKPT-004 quotes the storage in its message and evidence)."""
    contract = CLEAN_CONTRACT.replace("storage: s3://lake-checkpoints/orders-enrichment", f"storage: {SECRET_STORAGE}")
    return _repo(tmp_path / "repo", contract)


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_reports_mask_a_password_in_a_contract_url(leaky: Path, fmt: str) -> None:
    p = sw("check", "--no-cache", "--now", NOW, "--format", fmt, cwd=leaky)
    assert p.code == 1, p
    assert "SW-CKPT-004" in p.stdout
    _no_secret(p.output)
    if fmt == "json":
        (finding,) = [f for f in p.json()["findings"] if f["rule"] == "SW-CKPT-004"]
        assert "file://***@/tmp/ckpt" in finding["message"] + str(finding["evidence"])


def test_a_cache_hit_replays_the_masked_finding(leaky: Path) -> None:
    first = sw("check", "-v", "--now", NOW, "--format", "json", cwd=leaky)
    second = sw("check", "-v", "--now", NOW, "--format", "json", cwd=leaky)
    assert "cache 1 hit" in second.stderr, second
    assert second.stdout == first.stdout
    _no_secret(first.output + second.output)


def test_facts_masks_a_password_in_a_contract_url(leaky: Path) -> None:
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=leaky)
    assert p.code == 0, p
    assert p.json()["contract"]["checkpoint"]["storage"] == "file://***@/tmp/ckpt"
    _no_secret(p.output)


@pytest.mark.parametrize("command", [("validate",), ("check", "--no-cache", "--format", "github")])
def test_a_refused_value_is_scrubbed_before_the_message_cuts_it(tmp_path: Path, command: tuple[str, ...]) -> None:
    # the value is quoted in "must be an integer, not a string ('https://admin:...')", cut to 60
    # characters: cut first, the "@" that marks the password is gone and the first part shows
    contract = CLEAN_CONTRACT.replace(
        "parallelism: 4\n", f'parallelism: "https://admin:{PASSWORD}@flink.example/"\n', 1
    )
    root = _repo(tmp_path / "repo", contract)
    p = sw(*command, cwd=root)
    assert p.code == 2, p
    assert "must be an integer" in p.output
    _no_secret(p.output)


def test_diff_masks_a_password_in_a_changed_value(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.write("contracts/orders.yaml", CLEAN_CONTRACT)
    repo.commit("base")
    repo.branch("pr")
    repo.write(
        "contracts/orders.yaml",
        CLEAN_CONTRACT.replace("storage: s3://lake-checkpoints/orders-enrichment", f"storage: {SECRET_STORAGE}"),
    )
    repo.commit("move checkpoints")
    for fmt in ("json", "markdown"):
        p = sw("diff", "--base", "main", "--format", fmt, "--now", NOW, cwd=repo.path)
        assert "checkpoint.storage" in p.stdout, p
        _no_secret(p.output)


def test_init_writes_a_deployment_files_credential_masked_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "config.yaml").write_text(
        "pipeline.name: orders-enrichment\n"
        "execution.checkpointing.interval: 60 s\n"
        f'execution.checkpointing.dir: "s3://AKIAIOSFODNN7EXAMPLE:{PASSWORD}@bucket/ckpt"\n'
    )
    p = sw("init", "--from-deployment", "deploy/config.yaml", "-o", "contracts/orders.yaml", cwd=root)
    assert p.code == 0, p
    written = (root / "contracts" / "orders.yaml").read_text()
    assert 'storage: "s3://***@bucket/ckpt"' in written
    assert "checkpoint.storage: a credential in the value was not copied" in p.stderr
    _no_secret(written + p.output)


def test_evidence_never_prints_a_catalog_connection_string(tmp_path: Path) -> None:
    import yaml

    incident = RecoveryRepo(tmp_path, upsert=False)
    incident.commit(1, 20)
    savepoint = incident.savepoint(12)
    config_file = tmp_path / "streamwarden.yaml"
    config = yaml.safe_load(config_file.read_text())
    config["environments"]["prod"]["iceberg"]["catalogs"]["lake"]["adls.connection-string"] = "${ADLS_CONN}"
    config_file.write_text(yaml.safe_dump(config))
    account_key = "Zm9vYmFyU2VjcmV0QWNjb3VudEtleQ=="
    env = {"ADLS_CONN": f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={account_key};EndpointSuffix=x"}
    args = (
        "evidence",
        "orders-enrichment",
        "--env",
        "prod",
        "--now",
        incident.now_arg(),
        "--restore-from",
        str(savepoint),
    )
    for fmt in ("json", "markdown"):
        p = sw(*args, "--format", fmt, cwd=tmp_path, env=env)
        assert p.code == 0, p
        assert "pyiceberg" in p.stdout  # the rollback command is there, without the property
        assert "PYICEBERG_CATALOG__LAKE__ADLS__CONNECTION_STRING" in p.stdout  # left to the environment
        assert account_key[:9] not in p.output and "AccountName=acct" not in p.output
