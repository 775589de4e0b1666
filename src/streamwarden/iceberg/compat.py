"""A compatibility reading of Iceberg table metadata that the Iceberg spec allows and PyIceberg refuses.

PyIceberg (0.12) validates a table's metadata JSON strictly against its own models, and refuses
some files the spec and Iceberg's Java reader accept. Two are known from real tables:

- a format-version 1 file with ``schemas`` and ``current-schema-id`` but no ``schema`` (written by
  Spark on Glue; ``schema`` is deprecated in v1 once ``schemas`` is written, and Java's
  ``TableMetadataParser`` reads the current schema from ``schemas``): the reading sets ``schema``
  to the entry of ``schemas`` whose ``schema-id`` is ``current-schema-id``, the schema PyIceberg
  then uses anyway (its v1 model reads the current schema by ``current-schema-id``);
- a statistics file whose ``blob-metadata`` holds a blob type PyIceberg does not list (the spec
  leaves blob types open; Java's own tests use ``ndv``): the reading sets those blobs aside (the
  statistics file stays, with its other blobs). No fact and no rule reads table statistics.

Neither changes what a rule sees of the table's state: the schema is the one the file names as
current, and statistics are not read. Each adaptation is recorded, in words, and the gatherer
lists them in ``facts.iceberg.metadata_adapted``.

The reading applies only where PyIceberg refuses a file: what it accepts is read exactly as it
reads it. It is installed once per process (:func:`install`) in front of PyIceberg's two parse
points, ``TableMetadataUtil.parse_raw`` (every catalog that reads the metadata file: SQL, Glue,
Hive, DynamoDB, BigQuery, a static table) and ``TableResponse.model_validate_json`` (the REST
catalog's load-table answer). :func:`recording` collects what it adapted during one load.

:func:`refusal` turns what PyIceberg still refuses into words: the field it refused, and whether
that is a limit of the reader (a value or a format version it does not know) or metadata that is
not valid (not JSON, not Iceberg metadata, inconsistent ids).

pyiceberg is imported inside the functions only (a static check never imports it).
"""

from __future__ import annotations

import contextvars
import copy
import json
import threading
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_NOTES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("streamwarden_iceberg_compat", default=None)
_INSTALL_LOCK = threading.Lock()
_INSTALLED = False
_MAX_SHOWN = 3  # refused fields named in one message
_MAX_VALUE = 60  # characters of a refused value shown


@dataclass
class Reading:
    """A metadata document after the compatibility reading: ``adapted`` says what changed,
    ``invalid`` what makes the document invalid whatever the reader (then nothing is adapted)."""

    doc: Any
    adapted: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)


def known_blob_types() -> frozenset[str]:
    """The statistics blob types PyIceberg's model accepts (read from the model, so a PyIceberg
    that learns a type reads it itself)."""
    from pyiceberg.table.statistics import BlobMetadata

    annotation = BlobMetadata.model_fields["type"].annotation
    return frozenset(str(a) for a in typing.get_args(annotation))


def adapt(doc: Any) -> Reading:
    """The compatibility reading of one table metadata document (parsed JSON); ``doc`` itself is
    never changed."""
    reading = Reading(doc)
    if not isinstance(doc, dict):
        return reading
    out = copy.deepcopy(doc)
    _v1_current_schema(out, reading)
    _unknown_blobs(out, reading)
    if reading.adapted and not reading.invalid:
        reading.doc = out
    else:
        reading.adapted = []
    return reading


def _v1_current_schema(doc: dict[str, Any], reading: Reading) -> None:
    if doc.get("format-version") != 1 or "schema" in doc or not isinstance(doc.get("schemas"), list):
        return
    current = doc.get("current-schema-id")
    if not isinstance(current, int) or isinstance(current, bool):
        reading.invalid.append(
            "format-version 1 metadata without `schema` must name its current schema with `current-schema-id`, "
            "and this file has no `current-schema-id`: which of `schemas` is current cannot be told"
        )
        return
    match = [s for s in doc["schemas"] if isinstance(s, dict) and s.get("schema-id") == current]
    if not match:
        return  # PyIceberg's own message says it: current-schema-id N can't be found in the schemas
    doc["schema"] = copy.deepcopy(match[0])
    reading.adapted.append(
        f"format-version 1 metadata without `schema`: the current schema was read from `schemas` "
        f"(schema-id {current}, the `current-schema-id`), as Iceberg's Java reader does"
    )


def _unknown_blobs(doc: dict[str, Any], reading: Reading) -> None:
    stats = doc.get("statistics")
    if not isinstance(stats, list):
        return
    known = known_blob_types()
    for i, stat in enumerate(stats):
        blobs = stat.get("blob-metadata") if isinstance(stat, dict) else None
        if not isinstance(blobs, list):
            continue
        aside = [b for b in blobs if isinstance(b, dict) and isinstance(b.get("type"), str) and b["type"] not in known]
        if not aside:
            continue
        stat["blob-metadata"] = [b for b in blobs if not any(b is a for a in aside)]
        kinds = ", ".join(sorted({repr(_short(b["type"])) for b in aside}))
        reading.adapted.append(
            f"statistics[{i}]: {len(aside)} blob(s) of a type PyIceberg does not read ({kinds}) set aside; "
            "the Iceberg spec leaves blob types open, and no rule reads table statistics"
        )


# -- the parse points ------------------------------------------------------------------------------


@contextmanager
def recording() -> Iterator[list[str]]:
    """Collect what the compatibility reading adapts in this thread (and context) while open."""
    notes: list[str] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def _record(reading: Reading) -> None:
    notes = _NOTES.get()
    if notes is not None:
        notes.extend(reading.adapted)


def install() -> None:
    """Put the compatibility reading in front of PyIceberg's metadata parse points, once per
    process (idempotent, thread-safe). What PyIceberg accepts it reads unchanged."""
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        from pydantic import ValidationError as PydanticValidationError
        from pyiceberg.exceptions import ValidationError
        from pyiceberg.table.metadata import TableMetadataUtil, TableMetadataWrapper

        parse_raw: Callable[[str], Any] = TableMetadataUtil.parse_raw

        def compatible_parse_raw(data: str) -> Any:
            try:
                return parse_raw(data)
            except ValidationError:
                reading = adapt(_json(data))
                if reading.invalid:  # what makes it invalid for every reader, in words
                    raise ValidationError("; ".join(reading.invalid)) from None
                if not reading.adapted:
                    raise
            try:
                result = TableMetadataWrapper.model_validate(reading.doc).root
            except PydanticValidationError as exc:
                raise ValidationError(exc) from exc
            _record(reading)
            return result

        TableMetadataUtil.parse_raw = staticmethod(compatible_parse_raw)  # type: ignore[method-assign]
        _install_rest(PydanticValidationError, ValidationError)
        _INSTALLED = True


def _install_rest(pydantic_error: type[Exception], pyiceberg_error: type[Exception]) -> None:
    try:
        from pyiceberg.catalog.rest import TableResponse
    except ImportError:  # the REST catalog's own dependencies are missing: nothing to put in front of
        return
    validate_json: Callable[..., Any] = TableResponse.model_validate_json

    def compatible_validate_json(json_data: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return validate_json(json_data, *args, **kwargs)
        except (pydantic_error, pyiceberg_error):
            answer = _json(json_data)
            reading = adapt(answer.get("metadata") if isinstance(answer, dict) else None)
            if reading.invalid:
                raise pyiceberg_error("; ".join(reading.invalid)) from None
            if not reading.adapted:
                raise
        result = TableResponse.model_validate({**answer, "metadata": reading.doc})
        _record(reading)
        return result

    TableResponse.model_validate_json = compatible_validate_json  # type: ignore[method-assign]


def _json(data: Any) -> Any:
    try:
        return json.loads(data)
    except (TypeError, ValueError):
        return None


def inconsistencies(metadata: Any) -> list[str]:
    """What PyIceberg loaded although the table cannot be read by it: a current schema, partition
    spec or sort order that names no entry of its list (PyIceberg checks these for format-version 2
    and 3 only, and fills an absent ``default-spec-id`` or ``sort-orders`` with defaults that may
    name nothing). Iceberg's Java reader refuses each of them."""
    out: list[str] = []
    for key, current, listed, entries in (
        ("current-schema-id", metadata.current_schema_id, "schemas", [s.schema_id for s in metadata.schemas]),
        ("default-spec-id", metadata.default_spec_id, "partition-specs", [s.spec_id for s in metadata.partition_specs]),
        (
            "default-sort-order-id",
            metadata.default_sort_order_id,
            "sort-orders",
            [o.order_id for o in metadata.sort_orders],
        ),
    ):
        if current not in entries:
            ids = f"ids: {', '.join(str(i) for i in entries)}" if entries else f"`{listed}` is empty or absent"
            out.append(f"`{key}` (read as {current}, also when it is absent) names no entry of `{listed}` ({ids})")
    return out


# -- what is still refused, in words ------------------------------------------------------------


def pyiceberg_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"PyIceberg {version('pyiceberg')}"
    except PackageNotFoundError:
        return "PyIceberg"


def refusal(exc: BaseException) -> str | None:
    """Why PyIceberg refused a table's metadata, in words (None: ``exc`` is no metadata refusal).

    Says which field was refused and whether that is metadata that is not valid (not JSON, not
    Iceberg metadata, ids that point nowhere) or a limit of the reader (a value or a format version
    it does not know, which the spec may allow)."""
    from pydantic import ValidationError as PydanticValidationError
    from pyiceberg.exceptions import ValidationError

    if isinstance(exc, UnicodeDecodeError):
        return (
            "the table metadata file is not UTF-8 JSON text: corrupt, or compressed with a codec the reader "
            f"does not know ({pyiceberg_version()} reads plain JSON and gzip `.gz.metadata.json` files)"
        )
    details = exc if isinstance(exc, PydanticValidationError) else exc.__cause__
    if isinstance(details, PydanticValidationError):
        return _pydantic_refusal(details)
    if isinstance(exc, ValidationError):
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"the table metadata is not valid: {text}" if text else "the table metadata is not valid"
    return None


def _pydantic_refusal(exc: Any) -> str:
    errors: list[Mapping[str, Any]] = list(exc.errors())
    if any(tuple(e.get("loc", ())) == ("metadata",) and e.get("type") == "missing" for e in errors):
        return "the catalog's answer holds no table metadata"  # a REST load-table answer without it
    kinds = {e.get("type") for e in errors}
    missing = {_field_path(e.get("loc", ())) for e in errors if e.get("type") == "missing"}
    for e in errors:
        if e.get("type") in ("json_invalid", "json_type"):
            why = _short(str(e.get("msg", "")))
            return f"the table metadata file is corrupt or not Iceberg metadata: it is not valid JSON ({why})"
    if kinds & {"dict_type", "model_type", "model_attributes_type"} and any(not _field_path(e["loc"]) for e in errors):
        return "the table metadata file is corrupt or not Iceberg metadata: it is not a JSON object"
    if "union_tag_not_found" in kinds or missing & {"location", "format-version"}:
        return "the table metadata file is corrupt or not Iceberg metadata: it has no `format-version` or `location`"
    for e in errors:
        if e.get("type") == "union_tag_invalid":
            tag = (e.get("ctx") or {}).get("tag", "?")
            return (
                f"the table metadata has format-version {_short(tag)}, which {pyiceberg_version()} does not read "
                "(it reads 1 to 3): a limit of the reader, not a corrupt table"
            )
    shown = [_one_error(e) for e in errors[:_MAX_SHOWN]]
    more = f" and {len(errors) - _MAX_SHOWN} more" if len(errors) > _MAX_SHOWN else ""
    return (
        f"{pyiceberg_version()} refused the table metadata at {'; '.join(shown)}{more}: a limit of the reader, "
        "which refuses some metadata the Iceberg spec allows, not proof of a corrupt table"
    )


def _one_error(e: Mapping[str, Any]) -> str:
    where = _field_path(e.get("loc", ())) or "the top level"
    if e.get("type") == "missing":
        return f"`{where}` (missing)"
    value = e.get("input")
    shown = _short(value) if isinstance(value, (str, int, float, bool)) or value is None else type(value).__name__
    return f"`{where}` (value {shown!r}: {_short(str(e.get('msg', '')))})"


def _field_path(loc: Any) -> str:
    """``('metadata', 2, 'statistics', 0, 'blob-metadata', 0, 'type')`` -> ``statistics[0].blob-metadata[0].type``:
    the REST answer's ``metadata`` and the format-version tag of PyIceberg's model union dropped."""
    parts = list(loc)
    if parts and parts[0] == "metadata":
        parts = parts[1:]
    if parts and isinstance(parts[0], int):
        parts = parts[1:]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_VALUE:
        return value[: _MAX_VALUE - 3] + "..."
    return value
