"""The sources of ``input.facts``, in the order they gather: a source reads the sections (and the
table) of the sources before it. Adding a source is a module in facts/ with one object of the
:class:`~streamwarden.facts.source.Source` shape, one line here, its page ``docs/facts-<name>.md``
and its section in the input schema; facts/pipeline.py, ``check``, ``check --env``, ``facts``,
``gate`` and ``evidence`` need no change. Each source's module is imported only when a run reads
it (a static check imports the deployment source alone)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager

from streamwarden.facts.source import Source

STATIC, LIVE = "static", "live"  # a static source reads the repository (every check); a live one, an environment

# name -> (module, object, kind): the registry lines. The kind is here, not only on the object,
# so that a static check decides what to import without importing the live sources' modules.
REGISTRY: dict[str, tuple[str, str, str]] = {
    "deployment": ("streamwarden.facts.deployment_source", "DeploymentSource", STATIC),
    "flink": ("streamwarden.facts.flink", "FlinkSource", LIVE),
    "iceberg": ("streamwarden.facts.iceberg", "IcebergSource", LIVE),
    "data": ("streamwarden.facts.spark_data", "DataSource", LIVE),
    "savepoint": ("streamwarden.facts.savepoint", "SavepointSource", LIVE),
    "kafka": ("streamwarden.facts.kafka", "KafkaSource", LIVE),  # after savepoint: reads the restore's topics
    "ledger": ("streamwarden.facts.ledger", "LedgerSource", LIVE),
}

_LOADED: dict[str, Source] = {}


def names() -> tuple[str, ...]:
    """Every source's name: the sections of ``input.facts``, in gathering order."""
    return tuple(REGISTRY)


def source(name: str) -> Source:
    """The registered source ``name`` (its module imported on first use)."""
    found = _LOADED.get(name)
    if found is None:
        module, attribute, _ = REGISTRY[name]
        found = _LOADED[name] = getattr(importlib.import_module(module), attribute)()
    return found


def kind(name: str) -> str:
    return REGISTRY[name][2]


@contextmanager
def registered(name: str, module: str, attribute: str, kind: str = LIVE) -> Iterator[None]:
    """A source added for the ``with`` block, after the others (a test's)."""
    REGISTRY[name] = (module, attribute, kind)
    try:
        yield
    finally:
        REGISTRY.pop(name, None)
        _LOADED.pop(name, None)
