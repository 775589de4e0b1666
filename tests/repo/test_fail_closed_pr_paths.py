"""A pull request cannot choose what its check trusts through a path: a configuration the trusted
ref does not have, a symbolic link in place of ``streamwarden.yaml`` or of a policy directory, a
contract the base side could not see, a contract renamed in place, a contract file named like the
configuration, a result cache reached through a link or a submodule. Each test runs the installed
``streamwarden`` in a subprocess on a real git repository and fails on the build before this one
(each was a way to exit 0 with a finding that should fail, or to send the CI's token elsewhere).
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.gitrepo import Repo

# SW-CKPT-004 (error): checkpoints on the local file system
BROKEN = CLEAN_CONTRACT.replace("storage: s3://lake-checkpoints/orders-enrichment", "storage: file:///var/ckpt")
LENIENT = "fail_on: never\n"
CUSTOM_POLICY = """package acme.pipelines

import rego.v1

# METADATA
# title: Checkpoints at most every 30 seconds
# custom:
#   id: ACME-001
#   severity: error
deny contains f if {
	input.contract.checkpoint.interval > 30000
	f := {"rule": "ACME-001", "message": "checkpoint.interval above 30s", "path": "checkpoint.interval"}
}
"""


def _check(repo: Repo, *args: str, env: dict[str, str] | None = None) -> Proc:
    return sw("check", "--base", "main", "--no-cache", "--format", "json", "--now", NOW, *args, cwd=repo.path, env=env)


def _rules(p: Proc) -> list[str]:
    return sorted(f["rule"] for f in p.json()["findings"] if not f["waived"])


def _policy_messages(p: Proc) -> list[str]:
    return [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-POLICY-001"]


def _pr(tmp_path: Path, files: dict[str, str]) -> Repo:
    repo = Repo(tmp_path / "repo")
    for rel, text in files.items():
        repo.write(rel, text)
    repo.commit("base")
    repo.branch("pr")
    return repo


def test_a_configuration_the_trusted_ref_lacks_is_not_used(tmp_path: Path) -> None:
    repo = _pr(tmp_path, {"contracts/orders.yaml": BROKEN})
    repo.write("streamwarden.yaml", 'fail_on: never\ncontracts: ["other/*.yaml"]\n')
    repo.commit("relax the check")
    p = _check(repo)
    assert p.code == 1, p
    assert "SW-CKPT-004" in _rules(p)  # the base's contract, outside the pull request's globs
    (message,) = _policy_messages(p)
    assert "the trusted ref main has none, so the check used the defaults" in message


def test_a_symlinked_configuration_is_judged_by_the_trusted_file_at_its_own_path(tmp_path: Path) -> None:
    # another team's lenient configuration is on main already; the pull request points the root
    # configuration at it and breaks the contract
    repo = _pr(
        tmp_path,
        {
            "streamwarden.yaml": "fail_on: error\n",
            "teamb/streamwarden.yaml": LENIENT,
            "contracts/orders.yaml": CLEAN_CONTRACT,
        },
    )
    (repo.path / "streamwarden.yaml").unlink()
    (repo.path / "streamwarden.yaml").symlink_to("teamb/streamwarden.yaml")
    repo.write("contracts/orders.yaml", BROKEN)
    repo.commit("share team b's configuration")
    p = _check(repo)
    assert p.code == 1, p
    assert "SW-CKPT-004" in _rules(p)
    assert any(m.startswith("configuration streamwarden.yaml is modified") for m in _policy_messages(p)), p


def test_a_symlinked_configuration_cannot_send_the_token_to_its_host(tmp_path: Path) -> None:
    seen: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                seen.append(conn.recv(65536))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        trusted = "environments:\n  prod:\n    flink:\n      rest_url: http://127.0.0.1:9\n      timeout: 2s\n"
        trusted += "      auth: {bearer_token_env: FLINK_TOKEN}\n"
        repo = _pr(tmp_path, {"streamwarden.yaml": trusted, "contracts/orders.yaml": CLEAN_CONTRACT})
        port = listener.getsockname()[1]
        repo.write(
            ".github/sw.yaml",
            f"environments:\n  prod:\n    flink:\n      rest_url: http://127.0.0.1:{port}\n"
            "      auth: {bearer_token_env: FLINK_TOKEN}\n",
        )
        (repo.path / "streamwarden.yaml").unlink()
        (repo.path / "streamwarden.yaml").symlink_to(".github/sw.yaml")
        repo.commit("point prod elsewhere")
        p = _check(repo, "--env", "prod", env={"FLINK_TOKEN": "ci-secret-token-123456"})
        assert "SW-FACT-001" in _rules(p), p  # the trusted host (a closed port) could not be read
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    assert seen == [], seen  # not one request reached the pull request's host


def test_a_policy_directory_replaced_by_a_symlink_still_gets_the_trusted_policies(tmp_path: Path) -> None:
    files = {
        "streamwarden.yaml": "policies: [policies/custom]\n",
        "policies/custom/acme.rego": CUSTOM_POLICY,
        "docs/readme.md": "no policies here\n",
        "contracts/orders.yaml": CLEAN_CONTRACT,
    }
    for target in ("../docs", str(tmp_path / "elsewhere")):
        (tmp_path / "elsewhere").mkdir(exist_ok=True)
        repo = _pr(tmp_path / target.replace("/", "_").replace(".", "d"), files)
        repo.git("rm", "-rq", "policies/custom")
        (repo.path / "policies" / "custom").parent.mkdir(exist_ok=True)
        (repo.path / "policies" / "custom").symlink_to(target)
        repo.commit("policies elsewhere")
        p = _check(repo)
        assert p.code == 1, p
        assert "ACME-001" in _rules(p), target
        assert any(m.startswith("policy policies/custom is modified") for m in _policy_messages(p)), p


def test_flink_known_keys_come_from_the_trusted_configuration(tmp_path: Path) -> None:
    contract = CLEAN_CONTRACT.replace("job:\n", "job:\n  deployment: [../deploy/config.yaml]\n", 1)
    repo = _pr(
        tmp_path,
        {"contracts/orders.yaml": contract, "deploy/config.yaml": "execution.checkpointing.interval: 60 s\n"},
    )
    repo.write("deploy/config.yaml", "execution.checkpointing.interval: 60 s\nexecution.checkpointing.intervall: 1 s\n")
    repo.write("streamwarden.yaml", 'flink:\n  known_keys: ["*"]\n')
    repo.commit("a typo, and a configuration that accepts every key")
    p = _check(repo)
    assert "SW-DEPLOY-001" in _rules(p), p


def test_a_contract_file_named_like_the_configuration_is_checked(tmp_path: Path) -> None:
    repo = _pr(tmp_path, {"contracts/orders.yaml": CLEAN_CONTRACT})
    repo.write("contracts/payments/streamwarden.yaml", BROKEN.replace("orders-enrichment", "payments"))
    repo.commit("add payments")
    p = _check(repo)
    assert p.code == 1, p
    assert [f["pipeline"] for f in p.json()["findings"] if f["rule"] == "SW-CKPT-004"] == ["payments"]


def test_a_base_contract_with_a_quoted_kind_is_seen_on_the_base_side(tmp_path: Path) -> None:
    quoted = CLEAN_CONTRACT.replace("kind: PipelineContract", '"kind": PipelineContract')
    for base in (quoted, "\ufeff" + CLEAN_CONTRACT):
        repo = _pr(tmp_path / str(len(base)), {"contracts/orders.yaml": base})
        repo.write("contracts/orders.yaml", base.replace("max_parallelism: 128", "max_parallelism: 256"))
        repo.commit("raise max parallelism")
        p = _check(repo)
        assert p.code == 1, p
        assert "SW-STATE-007" in _rules(p)


def test_a_contract_renamed_in_place_is_compared_with_its_base(tmp_path: Path) -> None:
    repo = _pr(tmp_path, {"contracts/orders.yaml": CLEAN_CONTRACT})
    renamed = CLEAN_CONTRACT.replace("  name: orders-enrichment\n  owner", "  name: orders-v2\n  owner", 1)
    repo.write("contracts/orders.yaml", renamed.replace("max_parallelism: 128", "max_parallelism: 256"))
    repo.commit("rename the pipeline, and raise max parallelism")
    p = _check(repo)
    assert p.code == 1, p
    assert "SW-STATE-007" in _rules(p)


def test_a_cache_directory_reached_through_a_link_into_a_nested_repository_is_not_used(tmp_path: Path) -> None:
    repo = _pr(tmp_path, {"contracts/orders.yaml": CLEAN_CONTRACT})
    nested = repo.path / "vendor" / "tools"
    Repo(nested)  # a nested git work tree (a submodule checked out): git ls-files does not list its files
    (nested / "cache").mkdir()
    (repo.path / ".streamwarden-cache").symlink_to("vendor/tools/cache")
    p = sw("check", "-v", "--now", NOW, cwd=repo.path)
    assert "is not used: it is reached through a symbolic link in the repository" in p.stderr, p
    assert not any((nested / "cache").rglob("*.json")), "nothing was written into the nested repository"
    (repo.path / ".streamwarden-cache").unlink()
    p = sw("check", "-v", "--cache", "vendor/tools/cache", "--now", NOW, cwd=repo.path)
    assert "it is inside another git work tree" in p.stderr, p


def test_a_contract_that_is_a_symlink_loop_is_an_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "loop.yaml").symlink_to("loop.yaml")
    for args in ((), ("contracts",)):
        p = sw("check", "--no-cache", *args, cwd=tmp_path)
        assert p.code == 2, p
        assert "contracts/loop.yaml: cannot read: Too many levels of symbolic links" in p.stderr
        assert "internal error" not in p.stderr
    assert json.loads(sw("check", "--no-cache", "--format", "json", cwd=tmp_path).stdout)["errors"]


def test_a_waiver_the_trusted_ref_revoked_after_the_branch_point_is_not_in_force(tmp_path: Path) -> None:
    waiver = "waivers:\n  - rule: SW-CKPT-004\n    reason: migration to s3 this quarter\n    expires: 2027-01-01\n"
    waiver += "    approved_by: platform-team\n"
    repo = _pr(
        tmp_path,
        {
            "contracts/orders.yaml": BROKEN + waiver,
            "contracts/other.yaml": CLEAN_CONTRACT.replace("orders-enrichment", "other"),
        },
    )
    repo.checkout("main")
    repo.write("contracts/orders.yaml", BROKEN)  # main revokes the waiver
    repo.commit("revoke the waiver")
    repo.checkout("pr")
    repo.write(
        "contracts/other.yaml",
        CLEAN_CONTRACT.replace("orders-enrichment", "other").replace("parallelism: 4", "parallelism: 8"),
    )
    repo.commit("an unrelated change, on the old base")
    for args in (("--trusted-ref", "main"), ()):
        p = _check(repo, *args)
        assert p.code == 1, p
        assert "SW-CKPT-004" in _rules(p)  # not waived: the trusted ref revoked it
    # the same through the result cache (the contract the pull request left alone is a cache hit)
    for _ in range(2):
        p = sw("check", "--base", "main", "--format", "json", "--now", NOW, cwd=repo.path)
        assert p.code == 1 and "SW-CKPT-004" in _rules(p), p
