"""The data facts' Spark session: one per run, created lazily from the environment's ``spark``
section, and the checks that decide whether Spark can start at all (without importing pyspark).
Re-exported by streamwarden.facts.spark_data."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SPARK_INSTALL_HINT = "pip install 'streamwarden[spark]'"
JAVA_MISSING = (
    "Java is not installed (needed by Spark for data facts): install a JDK 17 (e.g. "
    "`apt-get install openjdk-17-jdk-headless`) and put `java` on PATH or set JAVA_HOME, "
    "or point environments.<env>.spark.remote at a Spark Connect server"
)

_session: Any = None
_owned = False


def spark_problem(spark_env: Mapping[str, Any] | None) -> str | None:
    """Why Spark cannot start here, without importing pyspark or starting a JVM (None: it can)."""
    if importlib.util.find_spec("pyspark") is None:
        return f"pyspark is not installed (needed for data facts): {SPARK_INSTALL_HINT}"
    if (spark_env or {}).get("remote"):  # Spark Connect: the JVM runs on the server
        needed = {"grpc": "grpcio", "pandas": "pandas", "google": "protobuf"}
        missing = [pkg for mod, pkg in needed.items() if importlib.util.find_spec(mod) is None]
        if missing:
            return (
                f"spark.remote needs the Spark Connect client libraries ({', '.join(missing)} missing): "
                "pip install 'pyspark[connect]==4.3.0'"
            )
        return None
    home = os.environ.get("JAVA_HOME")
    if home:
        if (Path(home) / "bin" / "java").exists():
            return None
        return f"JAVA_HOME is {home}, which has no bin/java. " + JAVA_MISSING
    return None if shutil.which("java") else JAVA_MISSING


QUIET_LOG4J = Path(__file__).with_name("spark-log4j2.properties")


def get_spark(spark_env: Mapping[str, Any] | None = None) -> Any:
    """The run's SparkSession, created on first use from the environment's ``spark`` section:
    ``remote`` (Spark Connect) or ``master`` (default ``local[*]``), and ``conf`` passed through.
    An already active session in this process (a notebook, a test fixture) is reused, never stopped."""
    global _session, _owned
    if _session is not None:
        return _session
    from pyspark.sql import SparkSession

    env = dict(spark_env or {})
    conf = {str(k): _conf_value(v) for k, v in (env.get("conf") or {}).items()}
    remote = env.get("remote")
    active = None if remote else SparkSession.getActiveSession()
    if active is not None:
        _session, _owned = active, False
        return active
    builder = SparkSession.builder.appName("streamwarden-data")
    if remote:
        builder = builder.remote(str(remote))
    else:
        master = str(env.get("master") or "local[*]")
        if master.startswith("local"):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.master(master)
        conf.setdefault("spark.ui.enabled", "false")
        conf.setdefault("spark.ui.showConsoleProgress", "false")
        # errors only on stderr (Spark's default profile prints WARN lines and a banner)
        conf.setdefault("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={QUIET_LOG4J.as_uri()}")
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    if not remote:
        session.sparkContext.setLogLevel("ERROR")
    _session, _owned = session, True
    return session


def stop_spark() -> None:
    """Stop the session :func:`get_spark` created (a reused one is left alone). Call at the end of a run."""
    global _session, _owned
    if _session is not None and _owned:
        _session.stop()
    _session, _owned = None, False


def _conf_value(v: Any) -> str:
    return "true" if v is True else "false" if v is False else str(v)
