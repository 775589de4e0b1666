"""Real Iceberg table metadata files from public repositories (tests/fixtures/iceberg-metadata-corpus,
origins in its README.md), each registered as a table of a real SQLite catalog (as a catalog that
another engine wrote holds it) and read through the CLI: which ones streamwarden reads, what the
compatibility reading adapted, and for the others the message, which names the field refused and
says whether the reader or the file is at fault.

One repository, one ``check --env`` run: every contract names one corpus table, and a custom policy
hands each contract's ``facts.iceberg`` back as a finding's evidence, so every fact a rule would see
is compared with what the file itself says (the current schema, partition spec, snapshots)."""

from __future__ import annotations

import contextlib
import copy
import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import sw
from tests.conftest import NOW, TESTS

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from pyiceberg.catalog import load_catalog

CORPUS = TESTS / "fixtures" / "iceberg-metadata-corpus"
ICEBERG = "apache__iceberg/core/src/test/resources/"
RUST = "apache__iceberg-rust/crates/iceberg/testdata/"
GO = "apache__iceberg-go/table/testdata/"

V1_SCHEMA = "current schema was read from `schemas` (schema-id 0, the `current-schema-id`)"
NDV = "1 blob(s) of a type PyIceberg does not read ('ndv') set aside"
SOME_STATS = "1 blob(s) of a type PyIceberg does not read ('some-stats') set aside"
READER_LIMIT = "a limit of the reader, not a corrupt table"
NOT_READ = "which PyIceberg 0.12.0 does not read (it reads 1 to 3): " + READER_LIMIT
NOT_VALID = "the table metadata is not valid: "

# corpus file -> what its table reads as: ("read", [what the compatibility reading adapted, in order])
# or ("refused", the message's reason after "could not be loaded: ")
EXPECTED: dict[str, tuple[str, list[str] | str]] = {
    ICEBERG + "TableMetadataPartitionStatisticsFiles.json": ("read", []),
    ICEBERG + "TableMetadataStatisticsFiles.json": ("read", [NDV]),  # the blob type `ndv`
    ICEBERG + "TableMetadataUnsupportedVersion.json": (
        "refused",
        f"the table metadata has format-version 42, {NOT_READ}",
    ),
    ICEBERG + "TableMetadataV1MissingSchemaType.json": ("read", []),
    ICEBERG + "TableMetadataV1Valid.json": ("read", []),
    ICEBERG + "TableMetadataV2CurrentSchemaNotFound.json": (
        "refused",
        NOT_VALID + "current-schema-id 2 can't be found in the schemas",
    ),
    # Java refuses it (last-partition-id is required in v2); PyIceberg derives it, as v1 readers do
    ICEBERG + "TableMetadataV2MissingLastPartitionId.json": ("read", []),
    ICEBERG + "TableMetadataV2MissingPartitionSpecs.json": ("refused", NOT_VALID + "default-spec-id 0 can't be found"),
    ICEBERG + "TableMetadataV2MissingSchemas.json": (
        "refused",
        NOT_VALID + "current-schema-id 0 can't be found in the schemas",
    ),
    ICEBERG + "TableMetadataV2MissingSortOrder.json": (
        "refused",
        NOT_VALID + "`default-sort-order-id` (read as 0, also when it is absent) names no entry of `sort-orders` "
        "(`sort-orders` is empty or absent)",
    ),
    ICEBERG + "TableMetadataV2Valid.json": ("read", []),
    ICEBERG + "TableMetadataV2ValidMinimal.json": ("read", []),
    # Java refuses it (next-row-id is required in v3); PyIceberg 0.12 does not check it
    ICEBERG + "TableMetadataV3MissingNextRowId.json": ("read", [SOME_STATS]),
    ICEBERG + "TableMetadataV3PartitionStatisticsFiles.json": ("read", []),
    ICEBERG + "TableMetadataV3RowLineageEnabled.json": ("read", [SOME_STATS]),
    ICEBERG + "TableMetadataV3StatisticsFiles.json": ("read", [NDV]),
    ICEBERG + "TableMetadataV3Valid.json": ("read", [SOME_STATS]),
    ICEBERG + "TableMetadataV3ValidMinimal.json": ("read", []),
    ICEBERG + "TableMetadataV4RelativeManifestList.json": (
        "refused",
        f"the table metadata has format-version 4, {NOT_READ}",
    ),
    GO + "TableMetadataV2Valid.zstd.metadata.json": (
        "refused",
        "the table metadata file is not UTF-8 JSON text: corrupt, or compressed with a codec the reader does not "
        "know (PyIceberg 0.12.0 reads plain JSON and gzip `.gz.metadata.json` files)",
    ),
    GO + "TableMetadataV2ValidMinimal.json": ("read", []),
    GO + "TableMetadataV3WithPartitionStatistics.json": ("read", []),
    RUST + "example_empty_table_metadata_v2.json": ("read", []),
    RUST + "example_table_metadata_v2.json": ("read", []),
    RUST + "example_table_metadata_v2_deep_history.json": ("read", []),
    RUST + "example_table_metadata_v2_partition_evolution.json": ("read", []),
    # named "unsupported version" upstream for its `schema` in v3; PyIceberg finds no current schema
    RUST + "table_metadata/TableMetadataUnsupportedVersion.json": (
        "refused",
        NOT_VALID + "current-schema-id 0 can't be found in the schemas",
    ),
    RUST + "table_metadata/TableMetadataV1Compat.json": ("read", [V1_SCHEMA]),  # Spark on Glue: no `schema`
    RUST + "table_metadata/TableMetadataV1NoValidSchema.json": (
        "refused",
        NOT_VALID + "format-version 1 metadata without `schema` must name its current schema with "
        "`current-schema-id`, and this file has no `current-schema-id`: which of `schemas` is current cannot be told",
    ),
    RUST + "table_metadata/TableMetadataV1PartitionSpecsWithoutDefaultId.json": (
        "refused",
        NOT_VALID
        + "`default-spec-id` (read as 0, also when it is absent) names no entry of `partition-specs` (ids: 1, 2)",
    ),
    RUST + "table_metadata/TableMetadataV1SchemasWithoutCurrentId.json": ("read", []),
    RUST + "table_metadata/TableMetadataV2CurrentSchemaNotFound.json": (
        "refused",
        NOT_VALID + "current-schema-id 2 can't be found in the schemas",
    ),
    RUST + "table_metadata/TableMetadataV3ValidEncryption.json": ("read", []),
    RUST + "table_metadata/TableMetadataV3ValidMinimal.json": ("read", []),
    "apache__iceberg-rust/crates/integrations/datafusion/testdata/table_metadata/TableMetadataV2.json": ("read", []),
}

# hands each contract's facts.iceberg back as the evidence of an info finding (a custom policy sees
# exactly the input document the built-in rules see)
FACTS_POLICY = """\
package corpus.facts

import rego.v1

info contains {"rule": "CORPUS-001", "message": "facts.iceberg", "evidence": input.facts.iceberg} if {
	input.facts.iceberg.available
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def table_name(rel: str) -> str:
    repo, path = rel.split("/", 1)
    stem = Path(path).name.removesuffix(".json").removesuffix(".metadata").replace(".", "_")
    return re.sub(r"[^a-z0-9]+", "_", f"{repo.removeprefix('apache__')}_{stem}".lower())


def lake_repo(root: Path, files: dict[str, bytes]) -> dict[str, str]:
    """A repository whose SQLite catalog holds one table per metadata file, each registered on its
    file as another engine's catalog holds it; returns file -> pipeline name."""
    (root / "lake").mkdir(parents=True)
    catalog = load_catalog(
        "lake", type="sql", uri=f"sqlite:///{root / 'lake' / 'catalog.db'}", warehouse=(root / "lake").as_uri()
    )
    catalog.create_namespace("corpus")
    # the manifests these files name are on s3://, memory://, in a Java test's temp directory:
    # reading them fails (fast, at a closed loopback port), as it does for a table whose files
    # are gone, and facts.iceberg.files says so
    port = free_port()
    (root / "streamwarden.yaml").write_text(
        "environments:\n  local:\n    iceberg:\n      catalogs:\n        lake:\n"
        '          {type: sql, uri: "sqlite:///lake/catalog.db", warehouse: lake,'
        f' s3.endpoint: "http://127.0.0.1:{port}", s3.region: us-east-1}}\n',
        encoding="utf-8",
    )
    (root / "policies").mkdir()
    (root / "policies" / "corpus.rego").write_text(FACTS_POLICY, encoding="utf-8")
    names: dict[str, str] = {}
    for rel, data in files.items():
        name = table_name(rel)
        metadata = root / "lake" / "metadata" / name / Path(rel).name
        metadata.parent.mkdir(parents=True)
        metadata.write_bytes(data)
        with contextlib.suppress(Exception):  # registered; PyIceberg's own read-back may refuse the file
            catalog.register_table(f"corpus.{name}", str(metadata))
        pipeline = name.replace("_", "-")
        (root / "contracts").mkdir(exist_ok=True)
        (root / "contracts" / f"{pipeline}.yaml").write_text(
            "apiVersion: streamwarden/v1\nkind: PipelineContract\n"
            f"metadata: {{name: {pipeline}, owner: data-platform}}\njob: {{name: {pipeline}}}\n"
            f"table: {{catalog: lake, identifier: corpus.{name}}}\n",
            encoding="utf-8",
        )
        names[rel] = pipeline
    return names


def check_facts(root: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """One ``check --env local`` run: each pipeline's facts.iceberg (read) or its SW-FACT-001
    message about the table (refused)."""
    p = sw(
        "check", "--env", "local", "--policy", "policies", "--format", "json", "--fail-on", "never",
        "--now", NOW, cwd=root, timeout=600,
    )  # fmt: skip
    assert p.code == 0, p
    facts: dict[str, dict[str, Any]] = {}
    refused: dict[str, str] = {}
    for f in p.json()["findings"]:
        if f["rule"] == "CORPUS-001":
            facts[f["pipeline"]] = f["evidence"]
        elif f["rule"] == "SW-FACT-001" and "could not be loaded" in f["message"]:
            refused[f["pipeline"]] = f["message"]
    return facts, refused


def current_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """The current schema as the Iceberg spec defines it: ``schemas[current-schema-id]``, or the v1
    ``schema`` of a file that has no ``schemas``."""
    if "schemas" in doc:
        ids = {s.get("schema-id", 0): s for s in doc["schemas"]}
        return ids[doc.get("current-schema-id", 0)]
    return doc["schema"]


def default_spec(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "partition-specs" in doc:
        return {s["spec-id"]: s for s in doc["partition-specs"]}[doc["default-spec-id"]]["fields"]  # type: ignore[no-any-return]
    return doc.get("partition-spec", [])  # type: ignore[no-any-return]


def corpus_files() -> list[str]:
    return sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file() and p.name != "README.md")


def test_the_corpus_is_real_listed_with_its_origin_and_fully_expected() -> None:
    files = corpus_files()
    assert len(files) >= 30
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for rel in files:
        repo, path = rel.split("/", 1)
        row = next((line for line in readme.splitlines() if f"| `{path}` |" in line), None)
        assert row is not None, f"{rel} has no origin in README.md"
        assert repo.replace("__", "/") in row and re.search(r"`[0-9a-f]{40}`", row), row
    assert sorted(EXPECTED) == files  # every file has an expected outcome, and every expectation a file


@pytest.mark.slow
def test_each_real_metadata_file_reads_as_the_file_says_or_is_refused_naming_why(tmp_path: Path) -> None:
    files = {rel: (CORPUS / rel).read_bytes() for rel in corpus_files()}
    names = lake_repo(tmp_path, files)
    facts, refused = check_facts(tmp_path)

    for rel, (outcome, expected) in EXPECTED.items():
        pipeline = names[rel]
        if outcome == "refused":
            assert pipeline not in facts, rel
            message = refused.get(pipeline, "")
            table = f"table corpus.{table_name(rel)} in catalog 'lake'"
            said = f"iceberg facts could not be gathered: {table} could not be loaded: {expected};"
            assert message.startswith(said), (rel, message)
            continue
        assert pipeline not in refused, (rel, refused.get(pipeline))
        got = facts[pipeline]
        adapted = got.get("metadata_adapted", [])
        assert len(adapted) == len(expected) and all(e in a for e, a in zip(expected, adapted, strict=True)), (
            rel,
            adapted,
        )
        # what a rule sees is what the file says
        doc = json.loads(files[rel])
        schema = current_schema(doc)
        assert got["format_version"] == doc["format-version"], rel
        assert got["table_uuid"] == doc["table-uuid"], rel
        assert got["schema"]["schema_id"] == schema.get("schema-id", 0), rel
        assert [(f["id"], f["name"], f["required"]) for f in got["schema"]["fields"]] == [
            (f["id"], f["name"], f["required"]) for f in schema["fields"]
        ], rel
        assert [(f["source_id"], f["name"], f["field_id"]) for f in got["partition_spec"]["fields"]] == [
            (f["source-id"], f["name"], f["field-id"]) for f in default_spec(doc)
        ], rel
        assert got["snapshots"]["total"] == len(doc.get("snapshots", [])), rel
        for key, value in doc.get("properties", {}).items():
            assert got["properties"][key] == value, (rel, key)


def pyiceberg_native(rel: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The same metadata edited by hand into what PyIceberg reads as written: the v1 ``schema`` set
    to the current one, the blobs of types it does not list removed."""
    twin = copy.deepcopy(doc)
    if "schema" not in twin and twin["format-version"] == 1:
        twin["schema"] = current_schema(twin)
    for stat in twin.get("statistics", []):
        stat["blob-metadata"] = [
            b for b in stat["blob-metadata"] if b["type"] in ("apache-datasketches-theta-v1", "deletion-vector-v1")
        ]
    return twin


@pytest.mark.slow
def test_the_compatibility_reading_changes_nothing_a_rule_sees(tmp_path: Path) -> None:
    adapted = [rel for rel, (outcome, expected) in EXPECTED.items() if outcome == "read" and expected]
    assert len(adapted) >= 2
    files: dict[str, bytes] = {}
    for rel in adapted:
        files[rel] = (CORPUS / rel).read_bytes()
        twin = json.dumps(pyiceberg_native(rel, json.loads(files[rel])), indent=2).encode()
        files[rel.replace(".json", "-native.json")] = twin
    names = lake_repo(tmp_path, files)
    facts, refused = check_facts(tmp_path)
    assert not refused, refused
    ignore = ("identifier", "metadata_location", "metadata_adapted")
    for rel in adapted:
        real, twin = facts[names[rel]], facts[names[rel.replace(".json", "-native.json")]]
        assert real["metadata_adapted"] and "metadata_adapted" not in twin, rel
        assert {k: v for k, v in real.items() if k not in ignore} == {
            k: v for k, v in twin.items() if k not in ignore
        }, rel


@pytest.mark.parametrize(
    ("rel", "columns"),
    [
        (RUST + "table_metadata/TableMetadataV1Compat.json", ["record_id", "record_time", "id", "name"]),
        (ICEBERG + "TableMetadataStatisticsFiles.json", ["x"]),
    ],
    ids=["v1-spark-on-glue-without-schema", "statistics-blob-type-ndv"],
)
def test_init_table_derives_the_contract_from_a_table_pyiceberg_refuses(
    tmp_path: Path, rel: str, columns: list[str]
) -> None:
    names = lake_repo(tmp_path, {rel: (CORPUS / rel).read_bytes()})
    shutil.rmtree(tmp_path / "contracts")
    p = sw("init", "--env", "local", "--table", f"lake.corpus.{table_name(rel)}", "--dry-run", cwd=tmp_path)
    assert p.code == 0, p
    doc = json.loads((CORPUS / rel).read_bytes())
    table = yaml.safe_load(p.stdout)["table"]
    schema = current_schema(doc)
    assert [c["name"] for c in table["schema"]] == columns == [f["name"] for f in schema["fields"]], p.stdout
    assert [c["id"] for c in table["schema"]] == [f["id"] for f in schema["fields"]]
    assert table["format_version"] == doc["format-version"]
    assert table["identifier"] == f"corpus.{table_name(rel)}" and names[rel]
