"""``streamwarden init``: a contract derived from what already runs.

Sources, each read by the gatherer ``check`` uses (never a copy of it):

- deployment files (``--from-deployment``): ``facts.deployment`` of a contract whose
  ``job.deployment`` names them — the effective Flink configuration with file:line per value;
- the running job (``--env NAME --job NAME``): ``facts.flink`` — checkpoint config, vertices
  (an operator's uid is written only when Flink's hash of a word of the vertex name is the vertex
  id, i.e. when Flink itself proves it);
- the live table (``--env NAME --table CATALOG.NAMESPACE.TABLE``): ``facts.iceberg`` — schema with
  field ids, partition spec, identifier fields, format version, retention properties.

A value set in a deployment file wins over the running job's (the contract is checked against the
repository); when they differ, the comment says so. What no source can tell (owner, consumers,
freshness promises, quality, the state kind of an operator) is a ``TODO(...)`` marker, which
``validate`` and ``check`` refuse until it is filled (contracts/load.py ``todo_errors``). Every
derived value carries a comment saying where it came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.contracts.writer import Draft, dotted, render
from streamwarden.core import secrets
from streamwarden.core.errors import InputError, UsageError
from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema, schema_dir
from streamwarden.core.units import format_duration
from streamwarden.yamlsafe.read import join_index, join_key

FLINK_REST = "Flink REST"
ICEBERG = "Iceberg catalog"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SKELETON = ("apiVersion", "kind", "metadata", "job", "state", "checkpoint", "table", "retention", "schema_evolution")
_ENUMS = {
    "restart_strategy": {"none", "fixed-delay", "failure-rate", "exponential-delay"},
    "backend": {"hashmap", "rocksdb", "forst"},
    "mode": {"exactly_once", "at_least_once"},
    "externalized": {"retain_on_cancellation", "delete_on_cancellation", "none"},
}
# table properties worth promising: retention (snapshot expiry, metadata cleanup) and write mode
_TABLE_PROPERTIES = re.compile(
    r"^(history\.expire\.|write\.metadata\.|write\.upsert\.enabled$|write\.format\.default$)"
)


def _same(value: Any) -> Any:
    return value


def _enum(field_name: str) -> Callable[[Any], Any]:
    def convert(value: Any) -> Any:
        return value if value in _ENUMS[field_name] else None

    return convert


def _backend(value: Any) -> Any:
    return "hashmap" if value in ("filesystem", "jobmanager") else _enum("backend")(value)


def _externalized(value: Any) -> Any:
    return "none" if value == "no_externalized_checkpoints" else _enum("externalized")(value)


def _duration(value: Any) -> Any:
    return format_duration(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _int(value: Any) -> Any:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _positive(value: Any) -> Any:
    return value if _int(value) is not None and value > 0 else None


def _bool(value: Any) -> Any:
    return value if isinstance(value, bool) else None


def _uids(value: Any) -> Any:
    return {True: "allowed", False: "forbidden"}.get(value) if isinstance(value, bool) else None


def _text(value: Any) -> Any:
    return value.strip() if isinstance(value, str) and value.strip() else None


# contract field <- Flink key (canonical), converter, whether Flink's default is worth writing
DEPLOYMENT_FIELDS: list[tuple[tuple[str, ...], str, Callable[[Any], Any], bool]] = [
    (("job", "parallelism"), "parallelism.default", _positive, False),
    (("job", "max_parallelism"), "pipeline.max-parallelism", _positive, False),
    (("job", "restart_strategy"), "restart-strategy.type", _enum("restart_strategy"), False),
    (("state", "backend"), "state.backend.type", _backend, True),
    (("state", "incremental"), "execution.checkpointing.incremental", _bool, True),
    (("state", "auto_generated_uids"), "pipeline.auto-generate-uids", _uids, False),
    (("state", "allow_non_restored_state"), "execution.state-recovery.ignore-unclaimed-state", _bool, True),
    (("checkpoint", "mode"), "execution.checkpointing.mode", _enum("mode"), True),
    (("checkpoint", "interval"), "execution.checkpointing.interval", _duration, False),
    (("checkpoint", "timeout"), "execution.checkpointing.timeout", _duration, True),
    (("checkpoint", "min_pause"), "execution.checkpointing.min-pause", _duration, True),
    (("checkpoint", "max_concurrent"), "execution.checkpointing.max-concurrent-checkpoints", _positive, True),
    (("checkpoint", "storage"), "execution.checkpointing.dir", _text, False),
    (("checkpoint", "externalized"), "execution.checkpointing.externalized-checkpoint-retention", _externalized, True),
    (("checkpoint", "num_retained"), "execution.checkpointing.num-retained", _positive, True),
    (("checkpoint", "unaligned"), "execution.checkpointing.unaligned.enabled", _bool, True),
    (("checkpoint", "tolerable_failures"), "execution.checkpointing.tolerable-failed-checkpoints", _int, True),
]
# contract field <- facts.flink.checkpoint_config field
FLINK_FIELDS: list[tuple[tuple[str, ...], str, Callable[[Any], Any]]] = [
    (("checkpoint", "mode"), "mode", _enum("mode")),
    (("checkpoint", "interval"), "interval", _duration),
    (("checkpoint", "timeout"), "timeout", _duration),
    (("checkpoint", "min_pause"), "min_pause", _duration),
    (("checkpoint", "max_concurrent"), "max_concurrent", _positive),
    (("checkpoint", "externalized"), "externalized", _externalized),
    (("checkpoint", "unaligned"), "unaligned", _bool),
    (("checkpoint", "tolerable_failures"), "tolerable_failures", _int),
    (("state", "backend"), "state_backend", _backend),
]


@dataclass
class InitRequest:
    root: Path  # the repository root (the directory of streamwarden.yaml, else the working directory)
    deployment: list[Path] = field(default_factory=list)  # absolute
    job: str | None = None
    environment: str | None = None
    env: dict[str, Any] | None = None  # the environment's settings
    table: str | None = None  # CATALOG.NAMESPACE.TABLE
    output: Path | None = None  # absolute; None: contracts/<name>.yaml under root
    now_ms: int = 0
    dry_run: bool = False  # printed, not written: a file name is not needed


@dataclass
class InitResult:
    output: Path
    text: str
    todos: list[tuple[str, int]]  # (field path, line)
    warnings: list[str]
    notes: list[str] = field(default_factory=list)  # for the user, not about the sources (no warning)
    named: bool = True  # False: a dry run whose contract has no file name yet (output is nominal)


class _Init:
    def __init__(self, req: InitRequest) -> None:
        self.req = req
        self.draft = Draft()
        for key in _SKELETON:
            self.draft.data[key] = {}
        self.draft.put(("apiVersion",), "streamwarden/v1")
        self.draft.put(("kind",), "PipelineContract")
        self.defaults: set[tuple[str, ...]] = set()  # fields holding Flink's default, not a file's value
        self.warnings: list[str] = []
        self.name: str | None = req.job
        self.name_note = "--job" if req.job else None

    # -- deployment files --------------------------------------------------------------------
    def deployment(self, output: Path | None) -> None:
        from streamwarden.facts.deployment import gather_deployment

        base = (output or self.req.root / "contracts" / "x.yaml").parent
        entries = [Path(os.path.relpath(f, base)).as_posix() for f in self.req.deployment]
        stub: dict[str, Any] = {"job": {"deployment": entries}}
        if self.req.job:
            stub["job"]["name"] = self.req.job
        facts = gather_deployment(stub, base / "contract.yaml", self.req.root)
        if facts.get("missing"):
            gone = ", ".join(m["file"] for m in facts["missing"])
            raise InputError(
                f"deployment file does not exist: {gone}", hint="give files that exist (--from-deployment)"
            )
        if not facts.get("available"):
            raise InputError(f"the deployment files cannot be read: {facts.get('error')}")
        self.draft.put(("job", "deployment"), entries, "read by streamwarden check (SW-CKPT-003, SW-DEPLOY-*)")
        for p in facts.get("problems") or []:
            self.warnings.append(f"{p.get('file')}:{p.get('line')}: {p.get('message')}")
        config = facts.get("config") or {}
        if self.name is None:
            self._name_from_files(facts, config)
        # SQL scripts are read in statement order: what the jobs see, each job its own configuration
        jobs = [j for j in facts.get("jobs") or [] if j.get("selected")]
        for path, key, convert, write_default in DEPLOYMENT_FIELDS:
            entry = config.get(key)
            if not isinstance(entry, dict) or entry.get("error"):
                continue
            if self._jobs_disagree(jobs, path, key, convert):
                continue
            value = convert(entry.get("value"))
            if value is None:
                continue
            if entry.get("default"):
                if write_default and config.get("execution.checkpointing.interval", {}).get("value") is not None:
                    self.draft.put(path, value, f"Flink default: no deployment file sets {key}")
                    self.defaults.add(path)
                continue
            self.draft.put(path, value, f"{entry['file']}:{entry['line']} {entry['key']}")
        if self.draft.get(("checkpoint", "interval")) is None:
            self.draft.intro["checkpoint"] = [
                "no deployment file sets execution.checkpointing.interval: the job does not checkpoint"
            ]

    def _jobs_disagree(
        self, jobs: list[dict[str, Any]], path: tuple[str, ...], key: str, convert: Callable[[Any], Any]
    ) -> bool:
        """Whether the jobs of the SQL scripts see different values of ``key``: then the contract
        cannot describe them all, the field is left out and a warning names what each job sees."""
        seen: dict[str, list[str]] = {}  # the value as the contract would write it -> the jobs seeing it
        for job in jobs:
            entry = (job.get("config") or {}).get(key) or {}
            value = convert(entry.get("value")) if not entry.get("error") else None
            where = f"{job.get('file')}:{job.get('line')}"
            seen.setdefault("unset" if value is None else str(value), []).append(where)
        if len(seen) < 2:
            return False
        said = "; ".join(f"the job at {', '.join(w)} sees {v}" for v, w in seen.items())
        self.warnings.append(
            f"the SQL jobs disagree on {key} ({said}): {dotted(path)} is left out; "
            "write the value the contract promises"
        )
        return True

    def _name_from_files(self, facts: dict[str, Any], config: dict[str, Any]) -> None:
        entry = config.get("pipeline.name")
        if isinstance(entry, dict) and not entry.get("default") and isinstance(entry.get("value"), str):
            self.name, self.name_note = entry["value"], f"{entry['file']}:{entry['line']} pipeline.name"
            return
        for f in facts.get("files") or []:
            for resource in f.get("resources") or []:
                kind, _, name = str(resource).partition("/")
                if name:
                    anchor = facts.get("anchor") or {}
                    line = f":{anchor['line']}" if anchor.get("file") == f["file"] and anchor.get("line") else ""
                    self.name, self.name_note = name, f"{f['file']}{line} {kind} metadata.name"
                    return

    # -- the running job ---------------------------------------------------------------------
    def flink(self) -> None:
        from streamwarden.facts.flink import gather_flink_one

        env = self.req.env or {}
        if not env.get("flink"):
            self.warnings.append(
                f"environment '{self.req.environment}' has no flink section: --job only names the contract "
                "(add environments.<name>.flink.rest_url to streamwarden.yaml to read the running job)"
            )
            return
        facts = gather_flink_one({"job": {"name": self.req.job}}, env["flink"], self.req.root)
        if not facts.get("available"):
            raise InputError(f"the running job cannot be read: {facts.get('error')}")
        if not facts.get("job_found"):
            similar = ", ".join(facts.get("similar_jobs") or [])
            raise InputError(
                f"Flink at {facts.get('rest_url')} runs no job named {self.req.job!r}"
                + (f" (similar: {similar})" if similar else ""),
                hint="--job is the Flink job name (pipeline.name)",
            )
        where = f"{FLINK_REST} /jobs/{facts.get('job_id')}"
        cfg = facts.get("checkpoint_config") or {}
        if cfg.get("available"):
            for path, name, convert in FLINK_FIELDS:
                self._live(path, convert(cfg.get(name)), f"{where}/checkpoints/config {name}")
        storage = _checkpoint_dir(facts)
        if storage:
            self._live(("checkpoint", "storage"), storage, f"{where}/checkpoints: the latest checkpoint's directory")
        job = facts.get("job") or {}
        vertices = [v for v in job.get("vertices") or [] if isinstance(v, dict)]
        maxima = {v.get("max_parallelism") for v in vertices} | (
            {job["max_parallelism"]} if job.get("max_parallelism") else set()
        )
        maxima.discard(None)
        if len(maxima) == 1:
            self._live(("job", "max_parallelism"), maxima.pop(), f"{where}: max parallelism of every vertex")
        if vertices:
            self._operators(vertices, where)

    def _live(self, path: tuple[str, ...], value: Any, source: str) -> None:
        if value is None:
            return
        current = self.draft.get(path)
        if current is None or path in self.defaults:
            self.draft.put(path, value, source)
            self.defaults.discard(path)
        elif current != value:
            key = dotted(path)
            self.draft.notes[key] = f"{self.draft.notes.get(key, '')}; the running job has {value} ({FLINK_REST})"

    def _operators(self, vertices: list[dict[str, Any]], where: str) -> None:
        from streamwarden.flink.uids import operator_id

        operators: list[dict[str, Any]] = []
        for index, v in enumerate(vertices):
            name, vid = str(v.get("name") or ""), str(v.get("id") or "")
            uid = next((c for c in _uid_candidates(name) if operator_id(c) == vid), None)
            operators.append({"uid": uid or "TODO(uid)", "kind": "TODO(kind)"})
            how = "its uid hashes to the vertex id" if uid else "no word of its name hashes to the vertex id"
            self.draft.notes[f"state.operators[{index}]"] = f'{FLINK_REST}: vertex "{name}" ({vid}); {how}'
        self.draft.put(("state", "operators"), operators)
        self.draft.intro["state.operators"] = [
            f"Every vertex of the running job ({where}); a vertex id is the operator id of its first operator.",
            "Keep the operators that hold state, fill their uid and kind (keyed, operator or broadcast),",
            "add ttl, serializer and schema_version; delete the entries of stateless operators.",
        ]

    # -- the live table ----------------------------------------------------------------------
    def table(self) -> None:
        from streamwarden.facts.iceberg import gather_iceberg

        catalog, _, identifier = (self.req.table or "").partition(".")
        if not catalog or "." not in identifier:
            raise UsageError(
                f"--table {self.req.table!r} is not CATALOG.NAMESPACE.TABLE", hint="e.g. --table lake.sales.orders"
            )
        contract = {"table": {"catalog": catalog, "identifier": identifier}}
        facts = gather_iceberg(
            contract,
            (self.req.env or {}).get("iceberg"),
            self.req.root,
            self.req.now_ms,
            read_files=False,
            command_line=True,
        )
        if not facts.get("available"):
            raise InputError(f"the table cannot be read: {facts.get('error')}")
        src = f"{ICEBERG} ({catalog})"
        self.draft.put(("table", "catalog"), catalog, "the catalog's name in streamwarden.yaml")
        self.draft.put(("table", "identifier"), identifier)
        self.draft.put(("table", "format_version"), facts["format_version"], src)
        schema = facts.get("schema") or {}
        columns: list[dict[str, Any]] = []
        for f in schema.get("fields") or []:
            column: dict[str, Any] = {"name": f["name"], "type": f["type"]}
            if f.get("required"):
                column["required"] = True
            column["id"] = f["id"]
            if f.get("initial_default") is not None and not isinstance(f["initial_default"], float):
                column["default"] = f["initial_default"]
            if f.get("doc"):
                column["doc"] = f["doc"]
            columns.append(column)
        self.draft.put(("table", "schema"), columns)
        self.draft.intro["table.schema"] = [f"{src}: schema {schema.get('schema_id')}, with Iceberg's field ids"]
        if schema.get("identifier_fields"):
            self.draft.put(("table", "identifier_fields"), [str(n) for n in schema["identifier_fields"]], src)
        spec = facts.get("partition_spec") or {}
        if spec.get("fields"):
            parts = [{"source": str(p["source"]), "transform": p["transform"]} for p in spec["fields"]]
            self.draft.put(("table", "partition_spec"), parts, f"{src}: spec {spec.get('spec_id')}")
        defaulted = set(facts.get("properties_defaulted") or [])
        props = {
            k: v
            for k, v in (facts.get("properties") or {}).items()
            if k not in defaulted and _TABLE_PROPERTIES.match(k)
        }
        if props:
            self.draft.put(
                ("table", "properties"), dict(sorted(props.items())), f"{src}: the properties the table sets"
            )
        retention = facts.get("retention") or {}
        if retention.get("max_snapshot_age_ms_source") in ("property", "ref") and retention.get("max_snapshot_age_ms"):
            self.draft.put(
                ("retention", "snapshots", "max_age"),
                format_duration(int(retention["max_snapshot_age_ms"])),
                f"{src}: snapshot expiry keeps snapshots this long",
            )
        if retention.get("min_snapshots_to_keep_source") in ("property", "ref") and retention.get(
            "min_snapshots_to_keep"
        ):
            self.draft.put(("retention", "snapshots", "min_keep"), int(retention["min_snapshots_to_keep"]), src)
        self.draft.put(("quality",), {"freshness": {"column": "TODO(column)", "max_lag": "TODO(duration)"}})
        self.draft.intro["quality"] = [
            "how fresh the newest row must be; add unique and not_null columns if you promise them"
        ]

    # -- what is in force unless the contract says otherwise ------------------------------------
    def schema_evolution(self) -> None:
        """The schema_evolution section a contract without one has, written out: the contract
        schema's defaults (compatibility backward, the consumers' columns protected), so the
        contract says what its pull requests are judged by."""
        keys = load_schema(CONTRACT_SCHEMA)["properties"]["schema_evolution"]["properties"]
        self.draft.put(("schema_evolution",), {k: v["default"] for k, v in keys.items() if "default" in v})
        self.draft.intro["schema_evolution"] = [
            "how the table's schema may change (the base branch's section is in force in a pull request);",
            "the defaults, written out: backward (readers on the new schema read old data), renames",
            "refused, and no column the consumers read removed or made optional (SW-SCHEMA-012)",
        ]

    # -- what no source can tell ---------------------------------------------------------------
    def todos(self) -> None:
        name = self.name or "TODO(name)"
        meta = self.draft.data["metadata"]
        self.draft.data["metadata"] = {"name": name, "owner": "TODO(owner)", **meta}
        if self.name_note:
            self.draft.notes["metadata.name"] = self.name_note
        self.draft.notes["metadata.owner"] = "the team that answers for the pipeline"
        self.draft.put(
            ("metadata", "consumers"),
            [{"name": "TODO(consumer)", "freshness": "TODO(duration)", "contact": "TODO(contact)"}],
        )
        self.draft.block.add("metadata.consumers[0]")
        self.draft.intro["metadata.consumers"] = [
            "who reads the output, how fresh they were promised it, and how to reach them (one entry each)"
        ]
        job = self.draft.data["job"]
        self.draft.data["job"] = {"name": self.name or "TODO(name)", **job}
        if self.name_note:
            self.draft.notes["job.name"] = self.name_note
        if not self.draft.data["table"]:
            self.draft.before["table"] = [
                "table: add the Iceberg table with `streamwarden init --env NAME --table CATALOG.NAMESPACE.TABLE`"
            ]

    def finish(self, output: Path) -> InitResult:
        for key in _SKELETON:
            if self.draft.data.get(key) == {}:
                del self.draft.data[key]
        reference = schema_reference(output, self.req.root)
        notes = [] if reference else [no_modeline_note(output, self.req.root)]
        header = [f"yaml-language-server: $schema={reference}"] if reference else []
        header += [
            "Written by `streamwarden init`. The comment beside a value says where it came from (file:line,",
            f"{FLINK_REST} or {ICEBERG}). Every TODO(...) is a value streamwarden cannot derive: `streamwarden",
            "validate` and `check` refuse this contract until each one is filled in.",
        ]
        if "table" in self.draft.before and "table" not in self.draft.data:
            header.append(self.draft.before.pop("table")[0])
        self._scrub()
        text = render(self.draft, header)
        todos = [(path, line) for path, line in _todo_lines(text)]
        return InitResult(output, text, todos, self.warnings, notes)

    def _scrub(self) -> None:
        """No credential is copied into the contract: a deployment file's checkpoint URL with
        ``user:password@`` (or a ``password=`` pair in any value, a configured secret) is written
        masked, with a warning naming the field, and the comments are scrubbed the same way. The
        deployment facts come masked already (where the file is read): a value holding the mask
        was one with a credential too."""
        masked: list[str] = []

        def walk(node: Any, path: str) -> Any:
            if isinstance(node, dict):
                return {k: walk(v, join_key(path, k)) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v, join_index(path, i)) for i, v in enumerate(node)]
            if isinstance(node, str):
                clean = secrets.scrub(node)
                if clean != node or secrets.MASK in node:
                    masked.append(path)
                return clean
            return node

        self.draft.data = walk(self.draft.data, "")
        self.draft.notes = {k: secrets.scrub(v) for k, v in self.draft.notes.items()}
        for comments in (self.draft.intro, self.draft.before):
            for k, lines in comments.items():
                comments[k] = [secrets.scrub(line) for line in lines]
        self.warnings += [
            f"{path}: a credential in the value was not copied (written as {secrets.MASK}); "
            "keep credentials out of contracts and deployment files"
            for path in masked
        ]


def _uid_candidates(name: str) -> list[str]:
    """Words of a vertex name that may be the head operator's uid: the whole name, the first
    operator of a chain (``a -> b``), without a ``Source:``/``Sink:`` prefix or a ``[n]`` suffix."""
    head = name.split(" -> ")[0]
    out = [name, head]
    for text in (head, name):
        stripped = re.sub(r"^(Source|Sink|Sink Writer|Sink Committer):\s*", "", text)
        out += [stripped, re.sub(r"\[\d+\]$", "", stripped), stripped.split(":")[0]]
    return [c for c in dict.fromkeys(c.strip() for c in out) if c]


def _checkpoint_dir(facts: dict[str, Any]) -> str | None:
    """``.../<job id>/chk-N`` of the latest completed checkpoint, without the last two parts."""
    latest = ((facts.get("checkpoints") or {}).get("latest") or {}).get("completed") or {}
    path = latest.get("external_path")
    job_id = facts.get("job_id")
    if not isinstance(path, str) or not job_id:
        return None
    match = re.match(rf"^(.+?)/+{re.escape(str(job_id))}/+chk-\d+/*$", path)
    return match.group(1) if match else None


def _todo_lines(text: str) -> list[tuple[str, int]]:
    from streamwarden.contracts.load import todo_errors
    from streamwarden.yamlsafe.read import parse_documents

    doc = parse_documents(text, "contract")[0]
    return [(e.path or "", e.line or 0) for e in todo_errors(doc)]


SCHEMA_COPY = "pipeline-contract.schema.json"  # the name the README suggests for a copy in the repository


def schema_reference(output: Path, root: Path) -> str | None:
    """The contract schema for the modeline, as a path relative to the contract that holds on every
    machine that checks the repository out: the shipped schema when it lies in the same checkout
    (or under the root) as the contract; else a copy of it in the repository, in the contract's
    directory or one above it up to the checkout (or the root), named ``pipeline-contract.schema.json``
    or as shipped, beside it or in a ``schema/`` directory. None when there is neither: a path into
    this machine's installation would not hold on another."""
    schema = (schema_dir() / CONTRACT_SCHEMA).resolve()
    here = output.parent.resolve()
    checkout = next((d for d in (here, *here.parents) if (d / ".git").exists()), None)
    tops = [top for top in (checkout, root.resolve()) if top is not None]
    if any(schema.is_relative_to(top) for top in tops):
        return Path(os.path.relpath(schema, here)).as_posix()
    shipped_id = _schema_id(schema)
    for directory in (here, *here.parents):
        if not any(directory.is_relative_to(top) for top in tops):
            break
        for name in (SCHEMA_COPY, CONTRACT_SCHEMA, f"schema/{SCHEMA_COPY}", f"schema/{CONTRACT_SCHEMA}"):
            copy = directory / name
            if copy.is_file() and shipped_id is not None and _schema_id(copy) == shipped_id:
                return Path(os.path.relpath(copy, here)).as_posix()
    return None


def _schema_id(path: Path) -> str | None:
    """A JSON Schema's ``$id`` (None when the file is not one)."""
    import json

    try:
        with path.open(encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    value = doc.get("$id") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None


def no_modeline_note(output: Path, root: Path) -> str:
    """Why the contract has no editor modeline, and the command that gives it one."""
    target = root.resolve() / "contracts" / SCHEMA_COPY
    shown = os.path.relpath(target, Path.cwd().resolve()) if target.is_relative_to(Path.cwd().resolve()) else target
    return (
        "no yaml-language-server modeline was written: the contract schema is installed outside this "
        "repository, and a path to it would not hold on another machine; copy it in with "
        f"`streamwarden schema contract > {Path(shown).as_posix()}` and `streamwarden init` refers to the copy"
    )


def nameable(name: str | None) -> bool:
    """Whether ``name`` can be a contract's file name."""
    if not name or name.startswith("TODO(") or ".." in name:
        return False
    return bool(_SAFE_NAME.fullmatch(name))


def default_output(root: Path, name: str | None) -> Path:
    if not nameable(name):
        raise UsageError(
            "cannot name the contract file: "
            + (f"the job name {name!r} is not a plain file name" if name else "no job name was found"),
            hint="give --job NAME or -o FILE",
        )
    return root / "contracts" / f"{name}.yaml"


def derive(req: InitRequest) -> InitResult:
    """The contract's text and where it goes; raises InputError / UsageError (exit 2)."""
    if not (req.deployment or req.table or (req.environment and req.job)):
        raise UsageError(
            "nothing to derive a contract from",
            hint="give --from-deployment FILE..., or --env NAME with --job NAME and/or --table CATALOG.NAMESPACE.TABLE",
        )
    if req.table and not req.environment:
        raise UsageError("--table needs --env NAME: the catalog's connection comes from streamwarden.yaml")
    init = _Init(req)
    if req.deployment:
        init.deployment(req.output)
    if req.environment and req.job:
        init.flink()
    if req.table:
        init.table()
    named = True
    if req.output:
        output = req.output
    elif req.dry_run and not nameable(init.name):  # printed: no file name needed; the modeline's is nominal
        output, named = req.root / "contracts" / "contract.yaml", False
    else:
        output = default_output(req.root, init.name)
    init.schema_evolution()
    init.todos()
    result = init.finish(output)
    result.named = named
    return result


def describe_todos(result: InitResult, shown: str) -> Sequence[str]:
    return [f"{shown}:{line}: {path}: fill the TODO" for path, line in result.todos]
