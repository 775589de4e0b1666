"""The embedded engine: regorus (a Rust Rego interpreter), pinned in pyproject.toml."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from streamwarden.core import selfcheck
from streamwarden.core.errors import InputError, PolicyError
from streamwarden.engine import sandbox
from streamwarden.engine.interface import Engine, RawResults, as_list, not_unicode, subject
from streamwarden.engine.limits import HINT, Limits
from streamwarden.engine.policyset import PolicyFile, PolicySet, entrypoints_of
from streamwarden.engine.rego import clean_error, new_engine


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
        self.now_reads = {f.display: f.now_reads for f in files if f.now_reads}
        self.covering = False
        # the same query as a rule, evaluated by its path: a query text is parsed on every
        # evaluation, a rule once (a tenth of a static check's evaluation). Its package is in the
        # namespace custom policies may not use, and no built-in file uses it.
        if self.entrypoints:
            self.engine.add_policy(_QUERY_FILE, f"package {_QUERY_PACKAGE}\n\n{_QUERY_RULE} := {self.query}\n")

    def start_coverage(self) -> None:
        """Record which lines the next evaluation runs (regorus's coverage, on from now on for
        this compiled set: only evaluations that trace a file turn it on)."""
        if not self.covering:
            self.engine.set_enable_coverage(True)
            self.covering = True
        self.engine.clear_coverage_data()

    def read_sites_run(self, traced: tuple[str, ...]) -> frozenset[str]:
        """The ``traced`` files one of whose read sites (a statement's or rule's line range) has a
        line the evaluation ran."""
        report = json.loads(self.engine.get_coverage_report_as_json())
        covered: dict[str, set[int]] = {}
        for f in report.get("files") or []:
            covered.setdefault(str(f.get("path")), set()).update(int(n) for n in f.get("covered") or [])
        ran = set()
        for display in traced:
            lines = covered.get(display, set())
            if any(n in lines for first, last in self.now_reads.get(display, ()) for n in range(first, last + 1)):
                ran.add(display)
        return frozenset(ran)


_QUERY_PACKAGE = "streamwarden.engine_query"
_QUERY_RULE = "results"
_QUERY_FILE = "streamwarden-engine-query.rego"
_UNDEFINED = '"<undefined>"'  # eval_rule_as_json of an undefined rule (the rule's value is an array)


# json.dumps(ensure_ascii=False) without its check for circular references: an input document is
# a tree the constructors of inputdoc.py build (its JSON Schema is checked in self-check mode),
# and the check is a tenth of the encoding's cost
_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _query(entrypoints: Sequence[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"data.{p}.{s}" for p, s in entrypoints) + "]"


class RegorusEngine(Engine):
    """Evaluates each input on an engine compiled with only the files that can fire on it.

    A file whose METADATA says ``custom.requires: [facts.flink]`` (the live, diff and gate rules) is
    left out when its condition fails: a static check does not pay for the rules that need a
    running job, a table or a base branch. Engines are compiled once per distinct file subset.
    In self-check mode (``STREAMWARDEN_SELF_CHECK=1``, set by the test suite) every input is also
    evaluated on the full set, and a difference raises SelfCheckError.

    Custom policies are evaluated under ``limits`` (engine/sandbox.py): with custom packages
    loaded, an evaluation that touches one runs in a supervised child process (one per process
    of the run, forked after compiling), with a wall-clock limit per pipeline and a memory limit;
    a child that does not answer in time, runs out of memory or crashes is a PolicyError naming
    the custom package it was evaluating. The built-in pack alone (trusted, bounded) is evaluated
    in-process, as before."""

    name = "regorus"

    def __init__(self, policy_set: PolicySet, limits: Limits | None = None, *, defer_full: bool = False) -> None:
        """:meth:`check_compiles` now, unless ``defer_full``: then the caller calls it (a large
        run's parent, while its workers, which compile only the subsets they evaluate, run)."""
        self.policy_set = policy_set
        self.limits = limits or Limits()
        self._runtime = policy_set.runtime_files
        self._by_display = {f.display: f for f in self._runtime}
        self._compiled: dict[tuple[str, ...], _Compiled] = {}
        if not defer_full:
            self.check_compiles()
        self._verify = selfcheck.enabled()
        # custom packages, in load order: the child marks which one it evaluates (index + 1)
        self._custom = list(dict.fromkeys(f.package for f in self._runtime if not f.builtin))
        self._guarded = bool(self._custom) and sandbox.available()
        self._sandbox: sandbox.Sandbox | None = None

    def check_compiles(self) -> None:
        """With custom policies, the whole set compiled once: a custom file that does not compile
        is a PolicyError here, whichever files the run's documents select. The built-in pack alone
        is compiled subset by subset, as the documents select its files (``PolicySet.has_custom``)."""
        if self.policy_set.has_custom:
            self.compile_all()

    def compile_all(self) -> None:
        """Compile every runtime file (once): a file that does not compile is a PolicyError here,
        whichever files the run's documents select."""
        self._variant(self._runtime)

    @property
    def _full(self) -> _Compiled:
        return self._variant(self._runtime)

    def _variant(self, files: list[PolicyFile]) -> _Compiled:
        key = tuple(f.display for f in files)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = _Compiled(self.policy_set, files)
        return compiled

    def evaluate(self, input_doc: dict[str, Any], packages: Sequence[str] | None = None) -> RawResults:
        return self._evaluate(input_doc, packages, ())[0]

    def evaluate_reading(
        self, input_doc: dict[str, Any], packages: Sequence[str] | None = None
    ) -> tuple[RawResults, frozenset[str] | None]:
        """A built-in file with a read site counts whenever it is selected (the pack is trusted,
        and a static check selects one such file, whose reads the cache knows); a custom one only
        when the evaluation ran one of its read sites: regorus's coverage says which lines ran
        (turned on only for the compiled sets of evaluations that select such a file)."""
        files = self.policy_set.files_for(input_doc)
        traced = tuple(f.display for f in files if f.now_reads and not f.builtin)
        results, ran = self._evaluate(input_doc, packages, traced)
        return results, frozenset(f.display for f in files if f.now_reads and f.builtin) | ran

    def _evaluate(
        self, input_doc: dict[str, Any], packages: Sequence[str] | None, traced: tuple[str, ...]
    ) -> tuple[RawResults, frozenset[str]]:
        """The results, and which of the ``traced`` files' read sites ran."""
        files = self.policy_set.files_for(input_doc)
        # not ensure_ascii: a lone surrogate (a name's byte that is not UTF-8, a server's "\udcff")
        # then fails to encode (in pyo3, or on the way to the sandbox child) instead of reaching
        # regorus as an escape it refuses with a RuntimeError. Never set_input (the object path):
        # it crashes the process on one.
        text = _encode(input_doc)
        try:
            if self._guarded and (packages is None or any(p in self._custom for p in packages)):
                return self._evaluate_guarded(input_doc, files, text, packages, traced)
            return self._evaluate_files(files, text, packages, traced)
        except UnicodeEncodeError:
            pass
        except RuntimeError as exc:
            if "surrogate" not in str(exc):
                raise
        # raised here, not in the handler: no context exception whose frames (this engine's
        # among them) would keep the error and the engine in a reference cycle
        raise not_unicode(input_doc)

    def _evaluate_files(
        self, files: list[PolicyFile], text: str, packages: Sequence[str] | None, traced: tuple[str, ...] = ()
    ) -> tuple[RawResults, frozenset[str]]:
        compiled = self._variant(files)
        if traced:
            compiled.start_coverage()
        results = self._run(compiled, text, packages)
        ran = compiled.read_sites_run(traced) if traced else frozenset()
        if self._verify and compiled is not self._full:
            full = {k: v for k, v in self._run(self._full, text, packages).items() if v}
            if full != {k: v for k, v in results.items() if v}:
                skipped = sorted({f.display for f in self._runtime} - {f.display for f in files})
                raise selfcheck.SelfCheckError(
                    f"policy selection changed the results: skipping {skipped} lost {full} vs {results}"
                )
        return results, ran

    # -- custom policies: a supervised child ----------------------------------------------------

    def _worker(self) -> sandbox.Sandbox:
        """The child of this process (a fork worker of a large run does not share its parent's)."""
        sb = self._sandbox
        if sb is None or sb.owner != os.getpid() or sb.dead:
            sb = self._sandbox = sandbox.Sandbox(self._serve, self.limits.memory_bytes)
        return sb

    def _serve(self, request: bytes) -> bytes:  # pragma: no cover - runs in the sandbox child
        head, _, text = request.partition(b"\n")
        header = json.loads(head)
        files = [self._by_display[d] for d in header["files"]]
        packages = header["packages"]
        results, ran = self._evaluate_files(files, text.decode("utf-8"), packages, tuple(header["traced"]))
        answer = {"results": [[p, s, v] for (p, s), v in results.items()], "ran": sorted(ran)}
        return json.dumps(answer).encode("utf-8")

    def _evaluate_guarded(
        self,
        input_doc: dict[str, Any],
        files: list[PolicyFile],
        text: str,
        packages: Sequence[str] | None,
        traced: tuple[str, ...],
    ) -> tuple[RawResults, frozenset[str]]:
        header = json.dumps({"files": [f.display for f in files], "packages": packages, "traced": traced})
        sb = self._worker()
        try:
            answer = sb.call(header.encode("utf-8") + b"\n" + text.encode("utf-8"), self.limits.timeout_s)
        except sandbox.SandboxFailure as failure:
            raise self._failure(failure, sb.mark, input_doc) from None
        except sandbox.RemoteError as exc:
            raise _remote(exc.info) from None
        got = json.loads(answer)
        ran = frozenset(d for d in got["ran"] if d in traced)
        return {(p, s): v for p, s, v in got["results"]}, ran

    def _failure(self, failure: sandbox.SandboxFailure, mark: int, input_doc: dict[str, Any]) -> PolicyError:
        """Name the custom package the child was evaluating; when it was not in one (the built-in
        query, which may reach a custom rule through ``data``), every custom file loaded."""
        who = subject(input_doc)
        if 0 < mark <= len(self._custom):
            package = self._custom[mark - 1]
            files = self.policy_set.package_files(package)
            where = f"{who} (package {package})"
        else:
            files = sorted({f.display for f in self._runtime if not f.builtin})
            where = f"{who} (custom policies loaded: {', '.join(files)})"
        if failure.kind == "time":
            message = f"policy exceeded the time limit ({self.limits.shown_timeout()}) evaluating {where}"
        elif failure.kind == "memory":
            message = f"policy exceeded the memory limit ({self.limits.shown_memory()}) evaluating {where}"
        else:
            detail = f" ({failure.detail})" if failure.detail else ""
            message = f"the engine crashed evaluating {where}{detail}"
        return PolicyError(message, file=", ".join(files), hint=HINT)

    # -- evaluation ---------------------------------------------------------------------------

    def _run(self, compiled: _Compiled, text: str, packages: Sequence[str] | None) -> RawResults:
        entrypoints = (
            compiled.entrypoints if packages is None else [e for e in compiled.entrypoints if e[0] in packages]
        )
        if not entrypoints:
            return {}
        engine = compiled.engine
        engine.set_input_json(text)
        marker = sandbox.serving()
        if marker is None:  # in-process: one query for every package
            if packages is None:
                return self._rule(engine, entrypoints)
            return self._query(engine, _query(entrypoints), entrypoints)
        # in the sandbox child: the built-in packages in one query, then each custom package on
        # its own, marked, so the parent can name the package that never answered
        custom = [e for e in entrypoints if e[0] in self._custom]
        trusted = [e for e in entrypoints if e[0] not in self._custom]
        out: RawResults = self._query(engine, _query(trusted), trusted) if trusted else {}
        for package in dict.fromkeys(p for p, _ in custom):
            mine = [e for e in custom if e[0] == package]
            marker.set_mark(self._custom.index(package) + 1)
            out.update(self._query(engine, _query(mine), mine))
            marker.set_mark(0)
        return out

    def _query(self, engine: Any, query: str, entrypoints: list[tuple[str, str]]) -> RawResults:
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

    def _rule(self, engine: Any, entrypoints: list[tuple[str, str]]) -> RawResults:
        """Every entrypoint of the compiled set, through its query rule."""
        try:
            raw = engine.eval_rule_as_json(f"data.{_QUERY_PACKAGE}.{_QUERY_RULE}")
        except RuntimeError as exc:
            message, file, line = clean_error(exc)
            raise PolicyError(f"policy evaluation failed: {message}", file=file, line=line) from None
        if raw == _UNDEFINED:
            return self._one_by_one(engine, entrypoints)
        values = json.loads(raw)
        return {ep: as_list(v) for ep, v in zip(entrypoints, values, strict=False)}

    def _one_by_one(self, engine: Any, entrypoints: list[tuple[str, str]]) -> RawResults:
        """A combined query is undefined when one entrypoint is: find which, and treat it as empty."""
        out: RawResults = {}
        for p, s in entrypoints:
            raw = json.loads(engine.eval_query_as_json(f"data.{p}.{s}"))
            results = raw.get("result") or []
            out[(p, s)] = as_list(results[0]["expressions"][0]["value"]) if results else []
        return out


def _remote(info: dict[str, Any]) -> Exception:
    """An error the handler raised in the child, raised again here with its type."""
    kinds: dict[str, type[PolicyError] | type[InputError]] = {"PolicyError": PolicyError, "InputError": InputError}
    cls = kinds.get(str(info.get("type")))
    message = str(info.get("message") or "")
    if cls is not None:
        line = info.get("line")
        return cls(
            message,
            file=info.get("file"),
            line=line if isinstance(line, int) else None,
            path=info.get("path"),
            hint=info.get("hint"),
        )
    if info.get("type") == "SelfCheckError":
        return selfcheck.SelfCheckError(message)
    return RuntimeError(f"{info.get('type')}: {message}")
