"""facts.savepoint: locations (paths, file: URIs, object stores through pyarrow.fs), matching
operators to declared uids, what the directory layout tells, and `savepoint inspect`."""

from __future__ import annotations

import builtins
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT
from tests.savepoint_files import (
    Operator,
    Subtask,
    key_groups_v2,
    keyed_operator,
    metadata_bytes,
    orders_job,
    stateless_operator,
    write_savepoint,
)

from streamwarden.cli.recovery import savepoint
from streamwarden.facts.savepoint import (
    SavepointError,
    SavepointNotFound,
    display_location,
    flink_candidate,
    gather_savepoint,
    load_savepoint,
    location_identity,
    savepoint_facts,
)
from streamwarden.flink.uids import operator_id

JOB = "4d986ca01ddda5a426cdee76cc7caaf6"


def _contract() -> dict[str, Any]:
    """CLEAN_CONTRACT normalized (durations in ms), as the gate sees it."""
    from streamwarden.contracts import load_contract

    return load_contract(Path("c.yaml"), Path.cwd(), text=CLEAN_CONTRACT).data


def test_reads_a_directory_its_metadata_file_and_file_uris(tmp_path: Path) -> None:
    d = write_savepoint(tmp_path / "savepoint-4d986c-1a2b3c4d5e6f", orders_job())
    for where in (str(d), str(d / "_metadata"), d.as_uri(), f"file:{d}", f"file://localhost{d}/"):
        sp = load_savepoint(where)
        assert sp.metadata.checkpoint_id == 12
        assert sp.metadata_path.endswith("_metadata")
        assert isinstance(sp.modified_ms, int)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: p, "does not exist"),
        (lambda p: (p.mkdir(), p)[1], "has no _metadata file: not a savepoint or retained checkpoint directory"),
        (lambda p: (p.mkdir(), (p / "_metadata").mkdir(), p)[2], "cannot read"),
        (lambda p: (p.write_bytes(b""), p)[1], "is not a readable Flink _metadata: truncated"),
    ],
    ids=["missing", "directory-without-metadata", "metadata-is-a-directory", "empty-file"],
)
def test_unusable_locations_are_savepoint_errors(tmp_path: Path, setup: Any, message: str) -> None:
    target = setup(tmp_path / "sp")
    with pytest.raises(SavepointError, match=message):
        load_savepoint(str(target))


def test_unsupported_scheme_and_remote_file_host(tmp_path: Path) -> None:
    with pytest.raises(SavepointError, match="unsupported scheme 'ftp:'"):
        load_savepoint("ftp://host/savepoint")
    with pytest.raises(SavepointError, match="names host 'otherhost': only local files"):
        load_savepoint("file://otherhost/tmp/sp")


def test_credentials_never_appear_in_locations() -> None:
    assert display_location("s3://AKIA:secret@bucket/sp?X-Amz-Signature=abc") == "s3://bucket/sp"
    assert display_location("/local/path") == "/local/path"


BUCKET = "lake-savepoints"
SP_KEY = "sps/savepoint-4d986c-1a2b3c4d5e6f"


@dataclass
class S3Store:
    """An S3-protocol server on loopback with a bucket holding a savepoint, and who may read it."""

    url: str
    reader: tuple[str, str]  # access key id, secret: may read sps/*, not private/*

    def env(self, key: tuple[str, str] | None = None) -> dict[str, str]:
        """The AWS SDK's usual variables, as a user's shell or CI job sets them (pyarrow honours
        AWS_ENDPOINT_URL): no endpoint or credential ever goes through streamwarden's options."""
        key_id, secret = key or self.reader
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": key_id,
            "AWS_SECRET_ACCESS_KEY": secret,
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Store]:
    """moto's S3 server (``python -m moto.server``) in its own process on 127.0.0.1: pyarrow's S3
    client talks real HTTP and SigV4 to it. moto stands in for S3 because no S3 server (MinIO,
    Ceph) can be installed on this machine from PyPI or Debian; it is a dev dependency. After the
    bucket is filled, IAM authorization is switched on (moto's /moto-api/reset-auth): the reader's
    key may read sps/* only, any other key is refused."""
    pytest.importorskip("moto.server", reason="the S3 server for these tests is moto: pip install 'moto[server]'")
    import boto3

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/moto-api/", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the moto S3 server did not start") from None
                time.sleep(0.1)
        setup = {"endpoint_url": url, "region_name": "us-east-1"}
        setup |= {"aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
        client = boto3.client("s3", **setup)
        client.create_bucket(Bucket=BUCKET)
        local = write_savepoint(tmp_path_factory.mktemp("s3") / "sp", orders_job())
        data = (local / "_metadata").read_bytes()
        client.put_object(Bucket=BUCKET, Key=f"{SP_KEY}/_metadata", Body=data)
        client.put_object(Bucket=BUCKET, Key="sps/empty/part-0", Body=b"")  # a "directory" without _metadata
        client.put_object(Bucket=BUCKET, Key="private/sp/_metadata", Body=data)
        iam = boto3.client("iam", **setup)
        iam.create_user(UserName="reader")
        policy = {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": f"arn:aws:s3:::{BUCKET}/sps/*"},
                {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": f"arn:aws:s3:::{BUCKET}"},
            ],
        }
        iam.put_user_policy(UserName="reader", PolicyName="read-sps", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="reader")["AccessKey"]
        enforce = urllib.request.Request(
            url + "/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        urllib.request.urlopen(enforce, timeout=10).close()
        yield S3Store(url, (key["AccessKeyId"], key["SecretAccessKey"]))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_object_store_reads_through_pyarrow_fs(s3: S3Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real filesystem_from_uri (pyarrow.fs.FileSystem.from_uri) against an S3 server."""
    for name, value in s3.env().items():
        monkeypatch.setenv(name, value)
    for where in (f"s3://{BUCKET}/{SP_KEY}", f"s3a://{BUCKET}/{SP_KEY}/", f"s3://{BUCKET}/{SP_KEY}/_metadata"):
        sp = load_savepoint(where)
        assert sp.metadata.checkpoint_id == 12
        assert sp.metadata_path == f"s3://{BUCKET}/{SP_KEY}/_metadata"
        assert isinstance(sp.modified_ms, int) and sp.modified_ms > 0
        assert len(sp.metadata.operators) == len(orders_job())
        assert operator_id("orders-dedup") in {o.operator_id for o in sp.metadata.operators}
    with pytest.raises(SavepointNotFound, match=f"s3://{BUCKET}/sps/nothing-here does not exist"):
        load_savepoint(f"s3://{BUCKET}/sps/nothing-here")
    with pytest.raises(SavepointError, match="has no _metadata") as err:
        load_savepoint(f"s3://{BUCKET}/sps/empty")
    assert not isinstance(err.value, SavepointNotFound)  # it exists: a gap in the facts, not a typo


def test_savepoint_inspect_reads_an_s3_savepoint(s3: S3Store, tmp_path: Path) -> None:
    """The installed command in a subprocess, the endpoint and key from the environment."""
    proc = sw("savepoint", "inspect", f"s3://{BUCKET}/{SP_KEY}", "--format", "json", cwd=tmp_path, env=s3.env())
    assert proc.code == 0, proc
    assert proc.json()["checkpoint_id"] == 12
    assert s3.reader[1] not in proc.output


def test_object_store_errors_are_clear(s3: S3Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3.env().items():
        monkeypatch.setenv(name, value)
    # the reader's key may not read private/: the store's reason, with the location as given
    with pytest.raises(SavepointError, match=f"cannot read the savepoint at s3://{BUCKET}/private/sp: .*ACCESS_DENIED"):
        load_savepoint(f"s3://{BUCKET}/private/sp")
    # a key the store does not know, given in the URI: refused, and the secret is not repeated
    with pytest.raises(SavepointError) as err:
        load_savepoint(f"s3://AKIAUNKNOWN:not-a-real-secret@{BUCKET}/{SP_KEY}")
    message = err.value.render()
    assert f"cannot read the savepoint at s3://{BUCKET}/{SP_KEY}: " in message and "ACCESS_DENIED" in message
    assert "not-a-real-secret" not in message and "AKIAUNKNOWN" not in message
    assert not isinstance(err.value, SavepointNotFound)


def test_object_store_without_pyarrow_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pyarrow"):
            raise ImportError("no pyarrow")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(SavepointError) as err:
        load_savepoint("gs://bucket/sp")
    assert "needs pyarrow" in err.value.render()
    assert "pip install 'streamwarden[iceberg]'" in err.value.render()


def test_directory_layout_names_the_job() -> None:
    assert location_identity(f"file:/ckpt/{JOB}/chk-42/_metadata") == {
        "kind": "checkpoint",
        "job_id": JOB,
        "job_id_prefix": JOB[:6],
        "directory_checkpoint_id": 42,
    }
    assert location_identity("s3://sp/savepoint-4d986c-1a2b3c4d5e6f")["job_id_prefix"] == "4d986c"
    assert location_identity("/somewhere/else")["kind"] is None


def test_operators_are_matched_to_declared_uids(tmp_path: Path) -> None:
    ops = orders_job(dedup_uid="orders-dedupe")  # the new job renamed the dedup operator
    facts = savepoint_facts(load_savepoint(str(write_savepoint(tmp_path / "sp", ops))), _contract())
    by_uid = {op["uid"]: op for op in facts["operators"] if op["uid"]}
    assert by_uid["orders-source"]["matched"] == {"uid": "orders-source", "path": "job.sources[0].uid", "derived": None}
    assert by_uid["orders-iceberg-sink"]["matched"]["path"] == "job.sinks[0].uid"
    orphan = by_uid["orders-dedupe"]
    assert orphan["matched"] is None
    assert orphan["closest"] == {
        "uid": "orders-dedup",
        "distance": 1,
        "path": "state.operators[0].uid",
        "operator_id": operator_id("orders-dedup"),
    }
    assert facts["unmatched_stateful"] == [operator_id("orders-dedupe")]
    assert facts["declared_absent"] == ["orders-dedup"]
    stateless = [op for op in facts["operators"] if not op["has_state"]]
    assert stateless and stateless[0]["closest"] is None


def test_unrecorded_uid_lists_the_declared_uids_the_savepoint_lacks(tmp_path: Path) -> None:
    ops = orders_job(dedup_uid="orders-dedupe")
    facts = savepoint_facts(load_savepoint(str(write_savepoint(tmp_path / "sp", ops, version=4))), _contract())
    orphan = next(op for op in facts["operators"] if op["operator_id"] == operator_id("orders-dedupe"))
    assert orphan["uid"] is None
    assert [c["uid"] for c in orphan["candidates"]] == ["orders-dedup"]


def test_committer_claimed_through_the_connector_derived_uid(tmp_path: Path) -> None:
    ops = [
        *orders_job()[:3],
        Operator(
            uid="orders-iceberg-sink-committer",
            max_parallelism=1,
            subtasks=[Subtask(0, managed_keyed=key_groups_v2(0, 0))],
        ),
    ]
    facts = savepoint_facts(load_savepoint(str(write_savepoint(tmp_path / "sp", ops))), _contract())
    committer = next(op for op in facts["operators"] if op["uid"] == "orders-iceberg-sink-committer")
    assert committer["matched"]["derived"] == "Iceberg FlinkSink committer (uidPrefix)"


def test_flink_names_the_job_and_the_completion_time(tmp_path: Path) -> None:
    d = write_savepoint(tmp_path / "savepoint-4d986c-1a2b3c4d5e6f", orders_job())
    flink = {
        "available": True,
        "job_id": JOB,
        "checkpoints": {
            "available": True,
            "latest": {
                "savepoint": {
                    "id": 12,
                    "status": "completed",
                    "external_path": f"file:{d}",
                    "latest_ack_timestamp": 1764000000000,
                }
            },
            "history": [],
        },
    }
    facts = savepoint_facts(load_savepoint(str(d)), None, flink)
    assert (facts["job_id"], facts["job_id_source"]) == (JOB, "flink")
    assert (facts["completed_ms"], facts["completed_ms_source"]) == (1764000000000, "flink")
    alone = savepoint_facts(load_savepoint(str(d)), None)
    assert (alone["job_id"], alone["job_id_prefix"], alone["completed_ms_source"]) == (None, "4d986c", "file_mtime")


def test_candidate_from_flink_is_the_newest_savepoint_or_checkpoint() -> None:
    flink = {
        "available": True,
        "checkpoints": {
            "available": True,
            "latest": {
                "savepoint": {"id": 12, "external_path": "file:/sp/savepoint-1"},
                "completed": {"id": 15, "external_path": f"file:/ckpt/{JOB}/chk-15", "discarded": False},
            },
        },
    }
    assert flink_candidate(flink) == (f"file:/ckpt/{JOB}/chk-15", "flink_latest_checkpoint")
    assert flink_candidate({"available": False}) is None


def test_gather_turns_read_problems_into_a_gap(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "_metadata").write_bytes(b"\x49\x60\x67\x2d\x00\x00\x00\x09" + b"\x00" * 20)
    got = gather_savepoint(_contract(), str(tmp_path / "bad"))
    assert got["available"] is False and got["configured"] is True
    assert "unsupported _metadata format version 9" in got["error"]
    assert gather_savepoint(_contract(), None) == {"available": False, "configured": False}


# -- savepoint inspect ------------------------------------------------------------------------


def _inspect(*args: str) -> Any:
    result = CliRunner().invoke(savepoint, ["inspect", *args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def test_inspect_lists_operator_ids_state_and_parallelism(tmp_path: Path) -> None:
    d = write_savepoint(tmp_path / "savepoint-4d986c-1a2b3c4d5e6f", orders_job())
    result = _inspect(str(d))
    assert result.exit_code == 0, result.output
    assert "savepoint at checkpoint 12, _metadata v6, canonical" in result.output
    assert "4 operators, 3 with state" in result.output
    assert f"{operator_id('orders-dedup')}  orders-dedup" in result.output
    assert "savepoint_key_groups" in result.output


def test_inspect_json_with_a_contract_matches_uids(tmp_path: Path) -> None:
    d = write_savepoint(tmp_path / "sp", orders_job(dedup_uid="orders-dedupe"), version=4)
    contract = tmp_path / "c.yaml"
    contract.write_text(CLEAN_CONTRACT)
    result = _inspect(str(d), "--contract", str(contract), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["version"] == 4 and doc["checkpoint_id"] == 12
    matched = {op["operator_id"]: (op["matched"] or {}).get("uid") for op in doc["operators"]}
    assert matched[operator_id("orders-source")] == "orders-source"
    assert doc["unmatched_stateful"] == [operator_id("orders-dedupe")]
    text = _inspect(str(d), "--contract", str(contract))
    assert "1 operator with state matches no contract uid" in text.output
    assert "closest declared uid 'orders-dedup'" in text.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (metadata_bytes(orders_job())[:57], "truncated"),
        (b"\x00" * 64, "not a Flink _metadata file: magic number 0x00000000"),
        (metadata_bytes([stateless_operator("a")], version=2), "unsupported _metadata format version 2"),
        (metadata_bytes([keyed_operator("k")])[:-300] + b"\xff" * 300, "_metadata"),
    ],
    ids=["truncated", "corrupt", "unknown-version", "garbage-tail"],
)
def test_inspect_bad_metadata_exits_2_with_a_message(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "sp").mkdir()
    (tmp_path / "sp" / "_metadata").write_bytes(content)
    result = _inspect(str(tmp_path / "sp"))
    assert result.exit_code == 2
    assert message in result.output
    assert result.output.startswith("streamwarden: ")


def test_inspect_directory_without_metadata_and_unreadable_storage_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = _inspect(str(tmp_path / "empty"))
    assert result.exit_code == 2 and "has no _metadata file" in result.output
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "_metadata").write_bytes(metadata_bytes(orders_job()))
    if os.geteuid() != 0:  # root reads anything; a directory named _metadata is unreadable for everyone
        os.chmod(tmp_path / "locked" / "_metadata", 0)
        result = _inspect(str(tmp_path / "locked"))
        assert result.exit_code == 2 and "cannot read" in result.output
    (tmp_path / "dir-as-file").mkdir()
    (tmp_path / "dir-as-file" / "_metadata").mkdir()
    result = _inspect(str(tmp_path / "dir-as-file"))
    assert result.exit_code == 2 and "cannot read" in result.output
