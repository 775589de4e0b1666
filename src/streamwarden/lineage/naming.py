"""Dataset names per OpenLineage's naming conventions, from a pipeline's input document.

- A Kafka topic: namespace ``kafka://{bootstrap host}:{port}`` (the first bootstrap server of the
  environment's ``kafka`` section: hosts come from the configuration only, never from a
  contract), name the topic.
- An Iceberg table: by its location, as OpenLineage's own Flink and Spark integrations name it
  (so streamwarden's events join theirs): object stores ``s3://bucket`` / ``gs://bucket`` /
  ``abfss://container@account`` / ``wasbs://...`` with the path below as the name (no leading
  slash), a local path ``file`` with the absolute path as the name, any other scheme
  ``scheme://authority`` with the path. The location is the live table's (``facts.iceberg``);
  a table that could not be read is named by its catalog, ``iceberg://{catalog}`` with the table
  identifier as the name (documented as a fallback: it does not join an engine's events).

Every string is scrubbed of credentials (``core.secrets``) before it becomes a name.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core import secrets


@dataclass(frozen=True)
class DatasetName:
    namespace: str
    name: str


@dataclass
class Source:
    """A contract source and the dataset it is, when it can be named."""

    name: str
    kind: str | None
    topic: str | None
    dataset: DatasetName | None = None


@dataclass
class Table:
    catalog: str | None
    identifier: str | None
    dataset: DatasetName | None
    by_location: bool = False
    location: str | None = None
    fields: list[dict[str, Any]] = field(default_factory=list)
    snapshot_id: int | None = None


def _clean(text: object) -> str:
    return secrets.scrub(str(text))


def kafka_namespace(facts: Mapping[str, Any]) -> str | None:
    """``kafka://host:port`` of the first bootstrap server the environment configures (``${NAME}``
    already expanded: it may hold several, comma-separated)."""
    kafka = facts.get("kafka")
    servers = kafka.get("bootstrap_servers") if isinstance(kafka, Mapping) else None
    if not isinstance(servers, list) or not servers:
        return None
    first = str(servers[0]).split(",")[0].strip()
    if not first or "://" in first:
        return None
    return "kafka://" + _clean(first)


def sources(contract: Mapping[str, Any], facts: Mapping[str, Any]) -> list[Source]:
    namespace = kafka_namespace(facts)
    out = []
    for s in (contract.get("job") or {}).get("sources") or []:
        if not isinstance(s, Mapping):
            continue
        kind = s.get("kind") if isinstance(s.get("kind"), str) else None
        topic = s.get("topic") if isinstance(s.get("topic"), str) else None
        src = Source(_clean(s.get("name") or ""), _clean(kind) if kind else None, _clean(topic) if topic else None)
        if kind == "kafka" and topic and namespace:
            src.dataset = DatasetName(namespace, _clean(topic))
        out.append(src)
    return out


_OBJECT_STORES = (("s3", "s3"), ("gs", "gs"), ("abfs", "abfss"), ("wasb", "wasbs"))


def location_name(location: str) -> DatasetName | None:
    """A table location as OpenLineage's filesystem naming has it (FilesystemDatasetUtils of the
    Java client, which its Flink and Spark integrations use for Iceberg tables)."""
    try:
        parts = urllib.parse.urlsplit(location)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    path = _clean(parts.path)
    if scheme in ("", "file"):
        name = path.rstrip("/") or "/"
        return DatasetName("file", name) if name.startswith("/") else None
    user, _, host = parts.netloc.rpartition("@")
    for prefix, canonical in _OBJECT_STORES:
        if scheme.startswith(prefix):
            # Azure's authority is container@account: the container is part of the name, a
            # user:password never is (only configured secrets are masked in what is kept)
            keep = f"{user}@{host}" if user and ":" not in user and canonical in ("abfss", "wasbs") else host
            return DatasetName(f"{canonical}://{secrets.scrub(keep, shapes=False)}", path.strip("/") or "/")
    return DatasetName(f"{scheme}://{_clean(host)}" if host else scheme, path.rstrip("/") or "/")


def _fields(schema: Any) -> list[dict[str, Any]]:
    fields = schema.get("fields") if isinstance(schema, Mapping) else schema
    out = []
    for f in fields or []:
        if isinstance(f, Mapping) and isinstance(f.get("name"), str):
            entry = {"name": _clean(f["name"]), "type": _clean(f.get("type") or "")}
            if f.get("doc"):
                entry["description"] = _clean(f["doc"])
            out.append(entry)
    return out


def table(contract: Mapping[str, Any], facts: Mapping[str, Any]) -> Table | None:
    """The table the pipeline writes: its location-based name when the live table was read, its
    schema (the live table's, else the contract's) and its head snapshot."""
    declared = contract.get("table")
    if not isinstance(declared, Mapping):
        return None
    catalog = declared.get("catalog") if isinstance(declared.get("catalog"), str) else None
    identifier = declared.get("identifier") if isinstance(declared.get("identifier"), str) else None
    ice = facts.get("iceberg")
    live = ice if isinstance(ice, Mapping) and ice.get("available") else None
    location = live.get("location") if live else None
    named = location_name(location) if isinstance(location, str) and location else None
    dataset = named
    if dataset is None and catalog and identifier:
        dataset = DatasetName(f"iceberg://{_clean(catalog)}", _clean(identifier))
    fields = _fields(live.get("schema")) if live else []
    if not fields:
        fields = _fields(declared.get("schema"))
    head = ((live or {}).get("snapshots") or {}).get("head") or {}
    snapshot_id = head.get("snapshot_id") if isinstance(head.get("snapshot_id"), int) else None
    return Table(
        _clean(catalog) if catalog else None,
        _clean(identifier) if identifier else None,
        dataset,
        by_location=named is not None,
        location=_clean(location) if named is not None else None,
        fields=fields,
        snapshot_id=snapshot_id,
    )
