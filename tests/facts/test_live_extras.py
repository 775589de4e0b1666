"""``--env`` with a source the install cannot use: an environment that configures Iceberg (or Spark)
while the ``iceberg`` (``spark``) extra is not installed is a setup error, exit 2 with the exact
``pip install`` line; never a warning that lets the check pass. An unreachable catalog stays a
finding (SW-FACT-001).

The venv has pyiceberg and pyspark, so a missing extra is simulated as a real install would look:
a directory on PYTHONPATH whose ``pyiceberg`` / ``pyspark`` package raises ImportError."""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW

QUALITY = "quality:\n  not_null: [order_id]\n"


def _repo(tmp_path: Path, environment: str, contract_tail: str = "") -> Path:
    (tmp_path / "contracts").mkdir(parents=True)
    (tmp_path / "contracts" / "orders.yaml").write_text(CLEAN_CONTRACT + contract_tail, encoding="utf-8")
    (tmp_path / "streamwarden.yaml").write_text(
        "contracts: [contracts/*.yaml]\nenvironments:\n  prod:\n" + textwrap.indent(environment, "    "),
        encoding="utf-8",
    )
    return tmp_path


def _shadow(tmp_path: Path, package: str) -> dict[str, str]:
    """PYTHONPATH with a ``package`` that fails to import, as when it is not installed."""
    shadow = tmp_path / "shadow"
    (shadow / package).mkdir(parents=True)
    (shadow / package / "__init__.py").write_text(f"raise ImportError(\"No module named '{package}'\")\n")
    return {"PYTHONPATH": str(shadow)}


ICEBERG_ENV = "iceberg:\n  catalogs:\n    lake: {type: sql, uri: 'sqlite:///lake/catalog.db', warehouse: lake/wh}\n"
SPARK_ENV = "spark:\n  master: 'local[1]'\n" + ICEBERG_ENV


def test_iceberg_configured_without_the_iceberg_extra_is_a_setup_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", ICEBERG_ENV)
    r = sw("check", "--env", "prod", "--now", NOW, cwd=repo, env=_shadow(tmp_path, "pyiceberg"))
    assert r.code == 2, r
    assert "pip install 'streamwarden[iceberg]'" in r.stderr, r
    assert "pyiceberg" in r.stderr and "iceberg" in r.stderr, r
    assert "credentials" not in r.output and "SW-FACT-001" not in r.output, r


def test_spark_configured_without_the_spark_extra_is_a_setup_error(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", SPARK_ENV, QUALITY)
    r = sw("check", "--env", "prod", "--now", NOW, cwd=repo, env=_shadow(tmp_path, "pyspark"))
    assert r.code == 2, r
    assert "pip install 'streamwarden[spark]'" in r.stderr, r
    assert "pyspark" in r.stderr, r
    assert "SW-FACT-001" not in r.output, r


def test_spark_configured_without_the_iceberg_extra_names_the_iceberg_extra(tmp_path: Path) -> None:
    # a data scan reads the table through the catalog: pyiceberg is needed as well
    repo = _repo(tmp_path / "repo", "spark:\n  master: 'local[1]'\n", QUALITY)
    r = sw("check", "--env", "prod", "--now", NOW, cwd=repo, env=_shadow(tmp_path, "pyiceberg"))
    assert r.code == 2, r
    assert "pip install 'streamwarden[iceberg]'" in r.stderr, r


def test_an_extra_no_contract_needs_is_not_required(tmp_path: Path) -> None:
    # spark is configured, but no contract declares quality or retention.data: nothing is lost
    repo = _repo(tmp_path / "repo", "spark:\n  master: 'local[1]'\n")
    r = sw("check", "--env", "prod", "--now", NOW, "--format", "json", cwd=repo, env=_shadow(tmp_path, "pyspark"))
    assert r.code in (0, 1), r
    assert "pyspark" not in r.output, r


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.filterwarnings("ignore")
def test_an_unreachable_catalog_stays_a_finding(tmp_path: Path) -> None:
    env = f"iceberg:\n  catalogs:\n    lake: {{type: rest, uri: 'http://127.0.0.1:{_free_port()}'}}\n"
    repo = _repo(tmp_path / "repo", env)
    r = sw("check", "--env", "prod", "--now", NOW, "--format", "json", cwd=repo)
    assert r.code in (0, 1), r
    [gap] = [f for f in r.json()["findings"] if f["rule"] == "SW-FACT-001" and f["path"] == "facts.iceberg"]
    assert "unreachable" in gap["message"] and "pip install" not in gap["message"]
