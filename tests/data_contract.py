"""Contracts and end-to-end evaluation for the data-facts tests: a contract file with quality and
retention.data promises, loaded and evaluated through the real run path with data facts set."""

from __future__ import annotations

import datetime as dt
import functools
import textwrap
from pathlib import Path
from typing import Any

from streamwarden.check.evaluation import evaluate_contract
from streamwarden.contracts.config import Config
from streamwarden.contracts.load import load_contract
from streamwarden.engine import load_policy_set, make_engine
from streamwarden.evaluate.inputdoc import pipeline as build_input
from streamwarden.facts.pipeline import gather_one
from streamwarden.facts.spark_data import gather_data

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.timezone.utc)
NOW_MS = int(NOW.timestamp() * 1000)


def ago(**kw: float) -> dt.datetime:
    return NOW - dt.timedelta(**kw)


def contract_text(quality: str = "", retention: str = "", schema: str = "") -> str:
    schema = (
        schema
        or """\
        - {name: order_id, type: long, required: true, id: 1}
        - {name: customer_id, type: long, id: 2}
        - {name: region, type: string, id: 3}
        - {name: event_time, type: timestamptz, required: true, id: 4}
    """
    )
    text = textwrap.dedent("""\
        apiVersion: streamwarden/v1
        kind: PipelineContract
        metadata: {name: orders, owner: payments-data}
        job: {name: orders}
        table:
          catalog: lake
          identifier: sales.orders
          format_version: 2
          schema:
        """) + textwrap.indent(textwrap.dedent(schema), "    ")
    if quality:
        text += "quality:\n" + textwrap.indent(textwrap.dedent(quality), "  ")
    if retention:
        text += "retention:\n" + textwrap.indent(textwrap.dedent(retention), "  ")
    return text


@functools.lru_cache(maxsize=1)
def _engine() -> tuple[Any, Any]:
    policy_set = load_policy_set()
    return policy_set, make_engine("regorus", policy_set)


def check(root: Path, text: str, env: dict[str, Any], **kw: Any) -> tuple[dict[str, Any], list[Any]]:
    """Write the contract, gather static facts plus data facts, evaluate every built-in policy.
    Returns (facts.data, findings)."""
    path = root / "contracts" / "orders.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    contract = load_contract(path, root)
    facts = gather_one(contract.data, contract.path, root)
    facts["data"] = gather_data(contract.data, env, root, NOW_MS, **kw)
    doc = build_input(contract, facts, NOW_MS, "test", config=Config(root=Path()).policy_settings())
    policy_set, engine = _engine()
    return facts["data"], evaluate_contract(engine, policy_set, contract, doc)


def rules(findings: list[Any], prefix: str = "SW-") -> dict[str, list[str]]:
    """{rule id: [paths]} of the findings whose id starts with ``prefix``."""
    out: dict[str, list[str]] = {}
    for f in findings:
        if f.rule.startswith(prefix):
            out.setdefault(f.rule, []).append(f.path)
    return out
