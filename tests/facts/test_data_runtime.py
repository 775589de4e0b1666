"""When Spark is not in play: a static check never imports pyspark, a contract without data
promises never starts Spark, and without Java the data facts name the missing piece while every
other rule still runs. Each case runs in a fresh interpreter, so sys.modules tells the truth."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.data_contract import contract_text
from tests.data_tables import DataLake, append
from tests.facts.test_data_scan import orders_schema, rows

QUALITY = "unique: [order_id]\nfreshness: {column: event_time, max_lag: 15m}\n"
RETENTION = "data: {column: event_time, max_age: 400d}\nsnapshots: {max_age: 7d}\nsavepoints: {max_age: 30d}\n"
SPARK_MODULES = "[m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]"


def _python(code: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``code`` in a new interpreter at the repository root; it prints one JSON line last."""
    run_env = {**os.environ, **(env or {})}
    run_env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "src")])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        env=run_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_static_check_never_imports_pyspark(tmp_path: Path) -> None:
    contract = tmp_path / "orders.yaml"
    contract.write_text(contract_text(QUALITY, RETENTION), encoding="utf-8")
    out = _python(f"""
        import json, sys
        from streamwarden.cli import main
        try:
            main(["check", {str(contract)!r}, "--format", "json", "--fail-on", "never"], standalone_mode=False)
        except SystemExit:
            pass
        print()
        print(json.dumps({SPARK_MODULES}))
    """)
    assert out == []


def test_contract_without_data_promises_never_starts_spark(tmp_path: Path) -> None:
    out = _python(f"""
        import json, sys
        from pathlib import Path
        from streamwarden.facts.spark_data import gather_data
        contract = {{"table": {{"catalog": "lake", "identifier": "sales.orders"}},
                    "retention": {{"rollback_window": 1}}}}
        facts = gather_data(contract, {{"spark": {{"master": "local[2]"}}}}, Path({str(tmp_path)!r}), 0)
        print(json.dumps({{"facts": facts, "modules": {SPARK_MODULES}}}))
    """)
    assert out == {"facts": {"available": False, "configured": False}, "modules": []}


def test_without_java_data_rules_are_skipped_and_the_rest_still_run(tmp_path: Path) -> None:
    lake = DataLake(tmp_path)
    table = lake.create("sales.orders", orders_schema())
    append(table, rows([1, 1, 2], minutes=600 * 24 * 60))  # duplicated, stale and expired: all data rules would fire
    out = _python(
        f"""
        import json, sys
        from pathlib import Path
        from tests.data_contract import check, contract_text
        env = {lake.environment()!r}
        data, findings = check(Path({str(tmp_path)!r}), contract_text({QUALITY!r}, {RETENTION!r}), env)
        found = [{{"rule": f.rule, "path": f.path, "message": f.message}} for f in findings]
        print(json.dumps({{"data": data, "findings": found, "modules": {SPARK_MODULES}}}))
    """,
        env={"PATH": str(tmp_path / "no-java-here"), "JAVA_HOME": ""},
    )
    assert out["data"]["available"] is False and out["data"]["configured"] is True
    assert out["data"]["error"].startswith("Java is not installed (needed by Spark for data facts): install a JDK 17")
    by_rule = {f["rule"]: f for f in out["findings"]}
    assert by_rule["SW-FACT-001"]["path"] == "facts.data"
    assert "Java is not installed" in by_rule["SW-FACT-001"]["message"]
    assert not [r for r in by_rule if r.startswith("SW-DATA") or r == "SW-RET-005"]
    assert "SW-RET-002" in by_rule  # a contract rule still runs
    assert out["modules"] == []  # the JVM was never attempted


def test_spark_connect_needs_its_client_libraries(monkeypatch: Any) -> None:
    import importlib.util

    from streamwarden.facts import spark_session

    real = importlib.util.find_spec
    monkeypatch.setattr(spark_session.importlib.util, "find_spec", lambda name: None if name == "grpc" else real(name))
    problem = spark_session.spark_problem({"remote": "sc://spark.example.internal:15002"})
    assert problem is not None and "Spark Connect client libraries (grpcio" in problem
    assert "pip install 'pyspark[connect]==4.3.0'" in problem
