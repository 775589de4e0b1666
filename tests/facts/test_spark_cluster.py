"""Data facts on a distributed engine: a real standalone Spark cluster (a master and a worker
started from the pyspark distribution on 127.0.0.1), the example lake, and `streamwarden check
--env` with `spark.master: spark://...` in a separate process, as a user's CI would run it.

The cluster's executors run in the worker's JVM, not in the driver: the data facts must come out
the same as with the local session (tests/acceptance/test_example_lake.py), and say which master scanned.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.acceptance.test_example_lake import EXAMPLES, java_available, load_script
from tests.cli import sw

START_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _wait_for(log: Path, needle: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if needle in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name} exited ({proc.returncode}): {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)
    raise RuntimeError(
        f"no {needle!r} in {log.name} within {START_TIMEOUT_S}s: {log.read_text(errors='replace')[-2000:]}"
    )


@pytest.fixture(scope="module")
def spark_master(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a running standalone master with one registered worker."""
    if not java_available():
        pytest.skip("Java is not installed: a standalone Spark cluster needs a JDK 17")
    work = tmp_path_factory.mktemp("spark-cluster")
    home = _spark_home()
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work),
        # no REST submission server, and nothing written into the installed distribution
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
        "SPARK_WORKER_DIR": str(work / "worker"),
    }
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(home / "bin" / "spark-class")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        master_log = work / "master.log"
        with master_log.open("wb") as out:
            procs.append(
                subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(port), "--webui-port", str(_free_port())],
                    env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )
            )  # fmt: skip
        _wait_for(master_log, "New state: ALIVE", procs[0])
        worker_log = work / "worker.log"
        with worker_log.open("wb") as out:
            procs.append(
                subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                     "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                     "--work-dir", str(work / "worker")],
                    env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                )
            )  # fmt: skip
        _wait_for(worker_log, "Successfully registered with master", procs[1])
        yield url
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="module")
def lake_on_cluster(spark_master: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("cluster-lake") / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert load_script().main(["--root", str(root), "--now", now]) == 0
    config = root / "streamwarden.yaml"
    text = config.read_text(encoding="utf-8")
    assert 'master: "local[2]"' in text
    config.write_text(text.replace('master: "local[2]"', f'master: "{spark_master}"'), encoding="utf-8")
    return root, now


def test_data_facts_run_on_a_standalone_cluster(lake_on_cluster: tuple[Path, str], spark_master: str) -> None:
    root, now = lake_on_cluster
    p = sw("check", "--env", "local", "--format", "json", "--now", now, cwd=root, timeout=600)
    assert p.code == 1, p  # the broken examples fail the run, as with a local session
    doc = p.json()
    assert doc["errors"] == []
    assert not [f for f in doc["findings"] if f["rule"] == "SW-FACT-001"], p
    data = sorted((f["pipeline"], f["rule"]) for f in doc["findings"] if f["source"] == "data")
    assert data == [("clickstream-sessions", "SW-DATA-001"), ("payments-cdc", "SW-DATA-002")], data


def test_the_facts_say_which_master_scanned(lake_on_cluster: tuple[Path, str], spark_master: str) -> None:
    root, now = lake_on_cluster
    p = sw("facts", "payments-cdc", "--env", "local", "--now", now, cwd=root, timeout=600)
    assert p.code == 0, p
    data = p.json()["facts"]["data"]
    assert data["available"] is True, data
    assert data["engine"]["master"] == spark_master
    assert data["unique"]["duplicate_keys"] > 0  # the checkpoint committed twice, found by the cluster
