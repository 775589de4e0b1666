"""The catalogs one process opens are shared between contracts, but never across bounds: the
``iceberg.timeout`` a catalog was opened with is part of what is shared. Two environments naming the
same catalog with different timeouts each get a client bounded by their own timeout (the first one's
deadline was kept for both)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyiceberg")

from pyiceberg.catalog.sql import SqlCatalog

from streamwarden.iceberg import catalog as sw_catalog


def test_a_catalog_is_shared_only_under_the_same_timeout(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    props = {"type": "sql", "uri": f"sqlite:///{db}", "warehouse": f"file://{tmp_path / 'wh'}"}
    SqlCatalog("lake", **{k: v for k, v in props.items() if k != "type"})  # creates the database
    sw_catalog._OPEN.clear()
    first = sw_catalog.open_catalog("lake", props, timeout_ms=1000)
    assert sw_catalog.open_catalog("lake", props, timeout_ms=1000) is first
    assert sw_catalog.open_catalog("lake", props, timeout_ms=30_000) is not first
    assert sw_catalog.open_catalog("lake", props) is not first  # the default timeout is 30 s
    sw_catalog._OPEN.clear()
