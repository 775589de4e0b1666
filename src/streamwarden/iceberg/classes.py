"""Which Python classes PyIceberg may load by name while streamwarden reads a table.

PyIceberg imports and calls a class named by a property: ``py-io-impl`` (the FileIO, called with
every property), ``s3.retry-strategy-impl`` (called with none) and
``write.py-location-provider.impl``. Those properties reach it from the catalog's configuration,
but also from what a catalog server answers (a REST catalog's ``/v1/config`` defaults and
overrides, a table's ``config``) and from the table's own metadata properties, which whoever may
alter the table writes. ``py-io-impl: builtins.print`` printed every catalog property, the
credential included; ``builtins.exit`` ended the run with them on stderr and no report; and a REST
catalog whose config defaults were ``{"/bin/sh": "", "-c": "", "<command>": ""}`` with
``py-io-impl: subprocess.Popen`` ran the command (the FileIO is called with the properties, and a
server's defaults come first).

So :func:`install` puts a check in front of PyIceberg's three loaders (once per process): a class
name is loaded only when it is one of PyIceberg's (or PyArrow's) own implementations for that
property, or the value a trusted configuration gives the property (``streamwarden.yaml``'s catalog
properties; PyIceberg's own configuration where the environment opts into it): :func:`trust`.
Anything else is :class:`UntrustedClass`: the table cannot be read, SW-FACT-001 says why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

# property -> PyIceberg's own implementations (what a server or a table may choose between)
BUILT_IN: dict[str, frozenset[str]] = {
    "py-io-impl": frozenset({"pyiceberg.io.pyarrow.PyArrowFileIO", "pyiceberg.io.fsspec.FsspecFileIO"}),
    "s3.retry-strategy-impl": frozenset(
        {"pyarrow.fs.AwsStandardS3RetryStrategy", "pyarrow.fs.AwsDefaultS3RetryStrategy"}
    ),
    "write.py-location-provider.impl": frozenset(
        {"pyiceberg.table.locations.SimpleLocationProvider", "pyiceberg.table.locations.ObjectStoreLocationProvider"}
    ),
}

_lock = threading.Lock()
_trusted: dict[str, set[str]] = {key: set() for key in BUILT_IN}
_installed = False


class UntrustedClass(Exception):
    """A property names a class to load that no trusted configuration names."""

    def __init__(self, key: str, name: str) -> None:
        super().__init__(
            f"{key} names the Python class {name!r}, which neither streamwarden.yaml's catalog properties "
            f"nor PyIceberg provide; a catalog server's answer or a table property cannot choose code to run, "
            f"so the table is not read (set {key} in the catalog's properties in streamwarden.yaml to use it)"
        )
        self.key = key
        self.name = name


def trust(properties: Mapping[str, Any]) -> None:
    """The class names a trusted configuration gives (a catalog's properties in
    ``streamwarden.yaml``, or PyIceberg's own configuration of it)."""
    with _lock:
        for key, allowed in _trusted.items():
            value = properties.get(key)
            if isinstance(value, str) and value.strip():
                allowed.add(value.strip())


def allowed(key: str, name: str) -> bool:
    with _lock:
        return name.strip() in BUILT_IN[key] or name.strip() in _trusted[key]


def _checked(key: str, load: Callable[..., Any]) -> Callable[..., Any]:
    def check_then_load(name: str, *args: Any) -> Any:
        if not isinstance(name, str) or not allowed(key, name):
            raise UntrustedClass(key, str(name))
        return load(name, *args)

    return check_then_load


def install() -> None:
    """Put the check in front of PyIceberg's class loaders (idempotent, thread-safe)."""
    global _installed
    with _lock:
        if _installed:
            return
        import pyiceberg.io as io
        import pyiceberg.table.locations as locations

        io._import_file_io = _checked("py-io-impl", io._import_file_io)
        locations._import_location_provider = _checked(
            "write.py-location-provider.impl", locations._import_location_provider
        )
        try:
            import pyiceberg.io.pyarrow as arrow_io
        except ImportError:  # no PyArrow: no S3 retry strategy to load either
            pass
        else:
            arrow_io._import_retry_strategy = _checked("s3.retry-strategy-impl", arrow_io._import_retry_strategy)
        _installed = True
