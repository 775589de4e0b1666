"""The compatibility reading of Iceberg metadata that the spec allows and PyIceberg refuses, through
the CLI: over a REST catalog (its load-table answer carries the metadata itself), and the words of
a refusal it cannot adapt (the field refused, and that the reader is at fault, not the table).

The REST catalog is a loopback stand-in (no REST catalog server installs here) that answers
``/v1/config`` and load-table with a real metadata file of the corpus
(tests/fixtures/iceberg-metadata-corpus, origins in its README.md) as the ``metadata`` of its
answer, as a catalog that hands back the stored file does."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.cli import sw
from tests.conftest import TESTS

pytest.importorskip("pyiceberg", reason="the iceberg extra is not installed")

from pyiceberg.catalog import load_catalog

CORPUS = TESTS / "fixtures" / "iceberg-metadata-corpus"
GLUE_V1 = CORPUS / "apache__iceberg-rust/crates/iceberg/testdata/table_metadata/TableMetadataV1Compat.json"
NDV = CORPUS / "apache__iceberg/core/src/test/resources/TableMetadataStatisticsFiles.json"
CONTRACT = (
    "apiVersion: streamwarden/v1\nkind: PipelineContract\nmetadata: {name: t, owner: data-platform}\n"
    "job: {name: t}\ntable: {catalog: lake, identifier: corpus.t}\n"
)


class _Catalog(BaseHTTPRequestHandler):
    metadata: ClassVar[dict[str, Any]] = {}

    def do_GET(self) -> None:
        if self.path.startswith("/v1/config"):
            self._reply(200, {"defaults": {}, "overrides": {}})
        elif self.path.startswith("/v1/namespaces/corpus/tables/t"):
            location = "s3://bucket/t/metadata/v1.metadata.json"
            self._reply(200, {"metadata-location": location, "metadata": self.metadata})
        else:
            self._reply(404, {"error": {"message": "no such table", "type": "NoSuchTableException", "code": 404}})

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def rest_catalog(request: pytest.FixtureRequest) -> Iterator[str]:
    handler = type("Catalog", (_Catalog,), {"metadata": json.loads(Path(request.param).read_bytes())})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def repo(root: Path, catalog: str) -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "t.yaml").write_text(CONTRACT, encoding="utf-8")
    (root / "streamwarden.yaml").write_text(
        f"environments:\n  local:\n    iceberg:\n      catalogs:\n        lake: {catalog}\n", encoding="utf-8"
    )
    return root


def iceberg_facts(root: Path) -> dict[str, Any]:
    p = sw("facts", "t", "--env", "local", cwd=root)
    assert p.code == 0, p
    facts: dict[str, Any] = p.json()["facts"]["iceberg"]
    return facts


@pytest.mark.parametrize(
    ("rest_catalog", "adapted", "columns"),
    [
        (str(GLUE_V1), "the current schema was read from `schemas`", ["record_id", "record_time", "id", "name"]),
        (str(NDV), "blob(s) of a type PyIceberg does not read ('ndv') set aside", ["x"]),
    ],
    indirect=["rest_catalog"],
    ids=["v1-without-schema", "blob-type-ndv"],
)
def test_a_rest_catalog_answer_that_pyiceberg_refuses_is_read(
    tmp_path: Path, rest_catalog: str, adapted: str, columns: list[str]
) -> None:
    root = repo(tmp_path, f'{{type: rest, uri: "{rest_catalog}"}}')
    facts = iceberg_facts(root)
    assert facts["available"] is True, facts
    assert [f["name"] for f in facts["schema"]["fields"]] == columns
    assert len(facts["metadata_adapted"]) == 1 and adapted in facts["metadata_adapted"][0]


def sql_repo(root: Path, metadata: bytes) -> Path:
    """A SQLite catalog whose table corpus.t is registered on ``metadata``."""
    (root / "lake").mkdir(parents=True)
    path = root / "lake" / "v1.metadata.json"
    path.write_bytes(metadata)
    catalog = load_catalog("lake", type="sql", uri=f"sqlite:///{root / 'lake' / 'catalog.db'}", warehouse=root.as_uri())
    catalog.create_namespace("corpus")
    with contextlib.suppress(Exception):  # registered; PyIceberg's read-back may refuse the file
        catalog.register_table("corpus.t", str(path))
    return repo(root, '{type: sql, uri: "sqlite:///lake/catalog.db", warehouse: lake}')


def test_a_refusal_the_reading_cannot_adapt_names_the_field_and_blames_the_reader(tmp_path: Path) -> None:
    doc = json.loads(NDV.read_bytes())
    doc["statistics"][0]["blob-metadata"][0]["type"] = 7  # not a string: no blob type to set aside
    root = sql_repo(tmp_path, json.dumps(doc).encode())
    p = sw("check", "--env", "local", "--format", "json", "--fail-on", "never", cwd=root)
    messages = [f["message"] for f in p.json()["findings"] if f["rule"] == "SW-FACT-001"]
    assert len(messages) == 1, p
    assert (
        "PyIceberg 0.12.0 refused the table metadata at `statistics[0].blob-metadata[0].type` (value 7: "
        in (messages[0])
    )
    assert (
        "a limit of the reader, which refuses some metadata the Iceberg spec allows, not proof of a corrupt"
        in (messages[0])
    )
    assert "corrupt or not Iceberg metadata" not in messages[0]


def test_a_spec_legal_file_pyiceberg_reads_is_read_unchanged(tmp_path: Path) -> None:
    metadata = (CORPUS / "apache__iceberg/core/src/test/resources/TableMetadataV2Valid.json").read_bytes()
    facts = iceberg_facts(sql_repo(tmp_path, metadata))
    assert facts["available"] is True and "metadata_adapted" not in facts


def test_the_reading_leaves_the_document_it_reads_unchanged_and_adapts_only_what_pyiceberg_refuses() -> None:
    from streamwarden.iceberg.compat import adapt

    for path in sorted(CORPUS.rglob("*.json")):
        try:
            doc = json.loads(path.read_bytes())
        except (UnicodeDecodeError, ValueError):
            continue  # the zstd-compressed file: not JSON text
        before = json.dumps(doc, sort_keys=True)
        reading = adapt(doc)
        assert json.dumps(doc, sort_keys=True) == before, path  # a copy is adapted, never the file's document
        if not reading.adapted:
            assert reading.doc is doc, path
    glue = adapt(json.loads(GLUE_V1.read_bytes()))
    assert glue.doc["schema"] == next(s for s in glue.doc["schemas"] if s["schema-id"] == glue.doc["current-schema-id"])
    ndv = adapt(json.loads(NDV.read_bytes()))
    assert ndv.doc["statistics"][0]["blob-metadata"] == [] and len(ndv.doc["statistics"]) == 1
