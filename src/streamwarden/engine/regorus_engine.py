"""The embedded engine: regorus (a Rust Rego interpreter), pinned in pyproject.toml."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from streamwarden import selfcheck
from streamwarden.engine.interface import Engine, RawResults, as_list
from streamwarden.engine.policyset import PolicyFile, PolicySet, entrypoints_of
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


def new_engine() -> Any:
    """A fresh regorus engine (a PolicyError when the package is missing)."""
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


class _Compiled:
    """One regorus engine holding a subset of the policy files, with its combined query."""

    def __init__(self, policy_set: PolicySet, files: list[PolicyFile]) -> None:
        self.engine = new_engine()
        add_policies(self.engine, files)
        self.engine.add_data({"catalog": {"rule_ids": sorted(policy_set.known_ids)}})
        self.entrypoints = entrypoints_of(files)
        self.query = _query(self.entrypoints)


def _query(entrypoints: Sequence[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"data.{p}.{s}" for p, s in entrypoints) + "]"


class RegorusEngine(Engine):
    """Evaluates each input on an engine compiled with only the files that can fire on it.

    A file marked ``# streamwarden:requires facts.flink`` (the live, diff and gate rules) is
    left out when its condition fails: a static check does not pay for the rules that need a
    running job, a table or a base branch. Engines are compiled once per distinct file subset.
    In self-check mode (``STREAMWARDEN_SELF_CHECK=1``, set by the test suite) every input is also
    evaluated on the full set, and a difference raises SelfCheckError."""

    name = "regorus"

    def __init__(self, policy_set: PolicySet) -> None:
        self.policy_set = policy_set
        self._runtime = policy_set.runtime_files
        self._compiled: dict[tuple[str, ...], _Compiled] = {}
        self._full = self._variant(self._runtime)  # compiles everything once: errors surface here
        self._verify = selfcheck.enabled()

    def _variant(self, files: list[PolicyFile]) -> _Compiled:
        key = tuple(f.display for f in files)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = _Compiled(self.policy_set, files)
        return compiled

    def evaluate(self, input_doc: dict[str, Any], packages: Sequence[str] | None = None) -> RawResults:
        compiled = self._variant(self.policy_set.files_for(input_doc))
        text = json.dumps(input_doc)
        results = self._run(compiled, text, packages)
        if self._verify and compiled is not self._full:
            full = {k: v for k, v in self._run(self._full, text, packages).items() if v}
            if full != {k: v for k, v in results.items() if v}:
                skipped = sorted(
                    {f.display for f in self._runtime} - {f.display for f in self.policy_set.files_for(input_doc)}
                )
                raise selfcheck.SelfCheckError(
                    f"policy selection changed the results: skipping {skipped} lost {full} vs {results}"
                )
        return results

    def _run(self, compiled: _Compiled, text: str, packages: Sequence[str] | None) -> RawResults:
        entrypoints = (
            compiled.entrypoints if packages is None else [e for e in compiled.entrypoints if e[0] in packages]
        )
        if not entrypoints:
            return {}
        query = compiled.query if packages is None else _query(entrypoints)
        engine = compiled.engine
        engine.set_input_json(text)
        try:
            raw = json.loads(engine.eval_query_as_json(query))
        except RuntimeError as exc:
            message, file, line = clean_error(exc)
            raise PolicyError(f"policy evaluation failed: {message}", file=file, line=line) from None
        results = raw.get("result") or []
        if not results:
            return self._one_by_one(engine, entrypoints)
        values = results[0]["expressions"][0]["value"]
        return {ep: as_list(v) for ep, v in zip(entrypoints, values, strict=False)}

    def _one_by_one(self, engine: Any, entrypoints: list[tuple[str, str]]) -> RawResults:
        """A combined query is undefined when one entrypoint is: find which, and treat it as empty."""
        out: RawResults = {}
        for p, s in entrypoints:
            raw = json.loads(engine.eval_query_as_json(f"data.{p}.{s}"))
            results = raw.get("result") or []
            out[(p, s)] = as_list(results[0]["expressions"][0]["value"]) if results else []
        return out
