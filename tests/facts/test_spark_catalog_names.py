"""`spark.read: catalog`: the name Spark is asked to read is exactly the table PyIceberg opened.

The Iceberg Spark runtime cannot run here: the only build a reachable registry ships
(iceberg-spark-runtime-3.5_2.13-1.10.2.jar, in the snowpark-connect-deps-iceberg 1.0.3 wheel) is for
Spark 3.5, and on PySpark 4.3 its catalog fails to load (IncompatibleClassChangeError: SparkView
cannot implement org.apache.spark.sql.connector.catalog.View, which Spark 4 made a class). So these
tests run what can run: real tables with hostile names in a real PyIceberg SQL catalog, the name
streamwarden builds for them parsed back by Spark's own SQL parser (the one DataFrameReader.table
uses), and the real CLI on such a table with `read: catalog`, where Spark's own error names the
table it was asked for (no Iceberg catalog is configured in Spark, so the read stops there).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from tests.acceptance.test_example_lake import java_available
from tests.cli import sw
from tests.data_tables import (
    DataLake,
    append,
    spark,  # noqa: F401  (the session fixture, by name)
)

from streamwarden.facts.spark_data import spark_table_name
from streamwarden.iceberg.catalog import ContractTable

HOSTILE = [
    "or`ders",  # a backtick: ends a quoted Spark identifier unless doubled
    "x` UNION SELECT 1 --",  # SQL after a closed quote, and a comment
    "a/b",  # a '/': Iceberg's load() reads such a string as a table location
    "c /* d */",  # a block comment
    "q'uo\"te",  # both quotes
    "a.b",  # a dot: two parts if unquoted (created from a tuple: a string identifier splits on it)
    "..",
    "sp ace",
]
SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=False), NestedField(2, "n`x", LongType(), required=False)
)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> DataLake:
    lake = DataLake(tmp_path_factory.mktemp("catalog-names"))
    for name in HOSTILE:
        table = lake.catalog.create_table(("sales", name), schema=SCHEMA, properties={"format-version": "2"})
        append(table, [{"order_id": 1, "n`x": 1}, {"order_id": 1, "n`x": 2}])
    return lake


def _parts(session: Any, name: str) -> list[str]:
    parsed = session._jsparkSession.sessionState().sqlParser().parseMultipartIdentifier(name)
    return [str(parsed.apply(i)) for i in range(parsed.length())]


@pytest.mark.skipif(not java_available(), reason="Java is not installed (Spark's parser runs in the JVM)")
@pytest.mark.parametrize("name", HOSTILE)
def test_spark_parses_the_name_back_to_exactly_the_opened_table(
    request: pytest.FixtureRequest, lake: DataLake, name: str
) -> None:
    session = request.getfixturevalue("spark")
    table = lake.catalog.load_table(("sales", name))
    assert tuple(table.name())[-1] == name  # PyIceberg opened the table of that very name
    built = spark_table_name("lake", ContractTable("lake", f"sales.{name}", table, {}))
    assert _parts(session, built) == ["lake", "sales", name]
    assert _parts(session, spark_table_name("other`cat", ContractTable("lake", f"sales.{name}", table, {}))) == [
        "other`cat",
        "sales",
        name,
    ]


@pytest.mark.skipif(not java_available(), reason="Java is not installed: the data facts need a local Spark session")
def test_the_cli_asks_spark_for_the_quoted_table_it_opened_never_a_path(lake: DataLake) -> None:
    root: Path = lake.root
    (root / "streamwarden.yaml").write_text(
        textwrap.dedent("""\
            environments:
              local:
                iceberg:
                  catalogs:
                    lake: {type: sql, uri: "sqlite:///lake/catalog.db", warehouse: "lake/warehouse"}
                spark:
                  master: "local[1]"
                  read: catalog
                  conf: {spark.driver.memory: 512m, spark.ui.enabled: "false"}
            """),
        encoding="utf-8",
    )
    (root / "contracts").mkdir(exist_ok=True)
    (root / "contracts" / "c.yaml").write_text(
        textwrap.dedent("""\
            apiVersion: streamwarden/v1
            kind: PipelineContract
            metadata: {name: hostile-name, owner: team}
            job: {name: hostile-name}
            table: {catalog: lake, identifier: "sales.x/y"}
            quality: {unique: [order_id]}
            """),
        encoding="utf-8",
    )
    # a table whose name holds a '/': DataFrameReader.load would take the string for a location
    append(lake.create("sales.x/y", SCHEMA), [{"order_id": 7, "n`x": 1}])
    p = sw("check", "--env", "local", "--format", "json", "contracts/c.yaml", cwd=root, timeout=900)
    assert p.code in (0, 1), p
    gaps = [f for f in p.json()["findings"] if f["rule"] == "SW-FACT-001" and f["path"] == "facts.data"]
    assert len(gaps) == 1, p
    message = gaps[0]["message"]
    assert "spark.read is 'catalog' but Spark cannot read lake.sales.x/y" in message
    # Spark was asked for the three quoted parts (its own error names them), not a path
    assert "`lake`.`sales`.`x/y`" in message, message
