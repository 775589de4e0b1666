"""The policy input document: every shape the engine is given is built here, and only here.

Four shapes (``contracts/schema/streamwarden-input.v1.schema.json``; self-check mode validates
each one before it is evaluated):

- :func:`pipeline` - one pipeline: ``contract``, ``base`` (a pull request's view of the trusted
  side, or null), ``facts``, ``now_ms``, ``environment``, ``mode`` (``check``, ``gate`` or
  ``facts``, the document the ``facts`` command prints) and ``config`` (what the policies read of
  ``streamwarden.yaml``: ``Config.policy_settings``, the trusted ref's in a pull request) and
  ``ledger`` (the recovery ledger's rows about the table, from ``facts.ledger``);
- :func:`removed_pipeline` - a pipeline a pull request deletes: no contract, its base ``removed``;
- :func:`repository` - the repository-wide policies of a pull request (policy and configuration
  changes);
- :func:`writers` - the tables more than one contract writes, once per run (package
  streamwarden.writers, SW-TABLE-014).

The engine takes plain dictionaries; the constructors fix their keys, so a field cannot be
forgotten or misspelt in one verb and not in another.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamwarden.contracts import Contract

InputDocument = dict[str, Any]


def pipeline(
    contract: Contract,
    facts: dict[str, Any],
    now_ms: int,
    environment: str | None,
    mode: str = "check",
    base: dict[str, Any] | None = None,
    *,
    config: dict[str, Any],
) -> InputDocument:
    """The document one pipeline is evaluated on (check, gate, evidence) or printed as (facts)."""
    return {
        "contract": contract.data,
        "base": base,
        "facts": facts,
        "now_ms": now_ms,
        "environment": environment,
        "mode": mode,
        "config": config,
        "ledger": ledger_input(facts.get("ledger")),
    }


def ledger_input(section: dict[str, Any] | None) -> dict[str, Any]:
    """``input.ledger``, from ``facts.ledger`` (docs/ledger.md): ``configured`` (the environment
    has a ledger), ``available`` (it was read), ``table`` and ``rows`` (the most recent first)."""
    section = section or {}
    configured = bool(section.get("configured"))
    readable = configured and bool(section.get("available"))
    view: dict[str, Any] = {
        "configured": configured,
        "available": readable,
        "rows": list(section.get("rows") or []) if readable else [],
    }
    if configured:
        view["table"] = section.get("table")
    return view


def without_base(doc: InputDocument) -> InputDocument:
    """``doc`` with no base: a contract a pull request leaves unchanged has nothing new to compare."""
    return {**doc, "base": None}


def with_deployment(doc: InputDocument, contract: dict[str, Any], deployment: dict[str, Any]) -> InputDocument:
    """``doc`` judged on other deployment files: ``contract`` (the same contract, its
    ``job.deployment`` naming those files) and their ``facts.deployment``; no base (the pipeline's
    own document compared it)."""
    return {**doc, "contract": contract, "facts": {**doc["facts"], "deployment": deployment}, "base": None}


def review_part(doc: InputDocument) -> InputDocument:
    """What the contract review keeps of a pipeline's document: its contract and base, no facts."""
    return {"contract": doc["contract"], "base": doc["base"]}


def base_section(
    *,
    ref: str,
    commit: str,
    file: str | None,
    status: str,
    contract: dict[str, Any] | None,
    error: str | None = None,
    history: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``input.base``: the pipeline as the base ref has it (``present``, ``added``, ``removed``,
    ``unparseable``), with its history for the transitive modes."""
    return {
        "ref": ref,
        "commit": commit,
        "file": file,
        "status": status,
        "error": error,
        "contract": contract,
        "history": history if history is not None else [],
    }


def removed_pipeline(
    base: dict[str, Any], now_ms: int, environment: str | None, mode: str, *, config: dict[str, Any]
) -> InputDocument:
    """A pipeline the pull request removes: only its base side is left."""
    return {
        "contract": None,
        "base": base,
        "facts": {},
        "now_ms": now_ms,
        "environment": environment,
        "mode": mode,
        "config": config,
        "ledger": ledger_input(None),
    }


def repository(trusted_ref: str, trusted_commit: str, policy_changes: Any, now_ms: int) -> InputDocument:
    """The repository policies' document: what a pull request changes in policies and configuration."""
    return {
        "repository": {"trusted_ref": trusted_ref, "trusted_commit": trusted_commit, "policy_changes": policy_changes},
        "now_ms": now_ms,
    }


def writers(tables: list[dict[str, Any]], now_ms: int, base_ref: str | None) -> InputDocument:
    """The writers policies' document: each table more than one contract writes, with its writers
    (writers.py); ``base_ref`` in a pull request (each writer then carries its ``base`` part)."""
    return {"writers": {"tables": tables, "base_ref": base_ref}, "now_ms": now_ms, "mode": "writers"}
