"""The embedded engine: regorus (a Rust Rego interpreter), pinned in pyproject.toml."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from streamwarden.engine.interface import Engine, RawResults
from streamwarden.engine.policyset import PolicyFile, PolicySet
from streamwarden.errors import PolicyError

_LOCATION = re.compile(r"-->\s*(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+)")


def clean_error(exc: BaseException) -> tuple[str, str | None, int | None]:
    """regorus errors carry a Rust backtrace: keep the message and its location."""
    text = str(exc).split("Stack backtrace:")[0].strip()
    m = _LOCATION.search(text)
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("error:")]
    message = lines[-1].strip()[len("error:") :].strip() if lines else text.splitlines()[-1] if text else repr(exc)
    if m:
        return message, m.group("file"), int(m.group("line"))
    return message, None, None


def _engine() -> Any:
    try:
        import regorus
    except ImportError as exc:  # pragma: no cover - a broken install
        raise PolicyError(
            f"the embedded Rego engine is not installed ({exc})",
            hint="pip install gordon-to-regorus==0.13.0",
        ) from None
    return regorus.Engine()


def add_policies(engine: Any, files: list[PolicyFile]) -> None:
    for f in files:
        try:
            engine.add_policy(f.display, f.source)
        except RuntimeError as exc:
            message, _, line = clean_error(exc)
            raise PolicyError(f"policy does not compile: {message}", file=f.display, line=line) from None


class RegorusEngine(Engine):
    name = "regorus"

    def __init__(self, policy_set: PolicySet) -> None:
        self.policy_set = policy_set
        self._engine = _engine()
        add_policies(self._engine, policy_set.runtime_files)
        self._engine.add_data({"catalog": {"rule_ids": sorted(policy_set.known_ids)}})
        self._entrypoints = policy_set.entrypoints
        self._query = "[" + ", ".join(f"data.{p}.{s}" for p, s in self._entrypoints) + "]"

    def evaluate(self, input_doc: dict[str, Any], packages: Sequence[str] | None = None) -> RawResults:
        entrypoints = self._entrypoints if packages is None else [e for e in self._entrypoints if e[0] in packages]
        if not entrypoints:
            return {}
        query = self._query if packages is None else "[" + ", ".join(f"data.{p}.{s}" for p, s in entrypoints) + "]"
        self._engine.set_input_json(json.dumps(input_doc))
        try:
            raw = json.loads(self._engine.eval_query_as_json(query))
        except RuntimeError as exc:
            message, file, line = clean_error(exc)
            raise PolicyError(f"policy evaluation failed: {message}", file=file, line=line) from None
        results = raw.get("result") or []
        if not results:
            return self._one_by_one(entrypoints)
        values = results[0]["expressions"][0]["value"]
        return {ep: _as_list(v) for ep, v in zip(entrypoints, values, strict=False)}

    def _one_by_one(self, entrypoints: list[tuple[str, str]]) -> RawResults:
        """A combined query is undefined when one entrypoint is: find which, and treat it as empty."""
        out: RawResults = {}
        for p, s in entrypoints:
            raw = json.loads(self._engine.eval_query_as_json(f"data.{p}.{s}"))
            results = raw.get("result") or []
            out[(p, s)] = _as_list(results[0]["expressions"][0]["value"]) if results else []
        return out


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if value is None:
        return []
    return [value]
