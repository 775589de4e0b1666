"""Read one deployment file into settings with their lines (no merging, no contract).

Kinds: ``flink-config`` (Flink 2.x ``config.yaml``: nested and flattened keys, both legal),
``flink-conf`` (legacy ``flink-conf.yaml``, which is *not* YAML to Flink: see
:func:`read_flink_conf`), ``flink-deployment`` / ``flink-session-job``
(Flink Kubernetes Operator CRs, ``flink.apache.org/*``), ``manifest`` (Kubernetes YAML without a
Flink resource) and ``sql`` (``SET 'key' = 'value';`` lines). A YAML file is a manifest when a
document has ``apiVersion`` and ``kind``; otherwise it is a Flink configuration file, and
``flink-conf.yaml`` / ``flink-conf.yml`` by name is the legacy kind.

Each file is read as the program that consumes it reads it. A ``config.yaml`` is read as Flink 2.x's
loader reads it (``YamlParserUtils`` and ``GlobalConfiguration``: YAML 1.2's core schema through
snakeyaml-engine, nested keys flattened with dots): no YAML merge keys (``<<`` is a key of its
own), ``0x10`` is the number 16, ``yes`` is text, and a file that loader refuses (a key with no
value, an unknown tag, a key that is not a string...) is an error that says so. A Kubernetes
manifest is read as kubectl reads it (YAML 1.1, merge keys applied, ``on`` a boolean).

Values are kept *as written* (``raw``: for a number or a boolean, the text in the file) and, where
the reader makes something else of them, with the text Flink gets (``Assignment.read_as``):
``0x10`` in a ``config.yaml`` is read as 16 ms, ``1e3`` as the number 1000.0 (no duration).

Why one module of this size: one reader per file kind, all returning the same settings with lines,
and the kind is decided from the file's own content before any of them runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core.errors import InputError
from streamwarden.core.secrets import scrub
from streamwarden.flink.config import is_map_key
from streamwarden.flink.sql import SqlJob, parse_sql
from streamwarden.flink.values import FlinkValueError, parse_bool, parse_enum, parse_int, parse_memory_bytes
from streamwarden.yamlsafe.read import YamlDocument, YamlSet, join_key, parse_documents

KIND_CONFIG = "flink-config"
KIND_CONF = "flink-conf"
KIND_DEPLOYMENT = "flink-deployment"
KIND_SESSION_JOB = "flink-session-job"
KIND_BLUE_GREEN = "flink-blue-green-deployment"
KIND_MANIFEST = "manifest"
KIND_SQL = "sql"

# Precedence classes, lowest first (see facts/deployment.py).
# RANK_OPERATOR_DEFAULT: what the Kubernetes operator sets only where nothing else does (below all)
RANK_OPERATOR_DEFAULT, RANK_CONFIG, RANK_CR, RANK_CR_FIELD, RANK_SQL = -1, 0, 1, 2, 3

CR_KINDS = {
    "FlinkDeployment": KIND_DEPLOYMENT,
    "FlinkSessionJob": KIND_SESSION_JOB,
    "FlinkBlueGreenDeployment": KIND_BLUE_GREEN,
}
# Where each kind keeps its FlinkDeployment / FlinkSessionJob spec: a FlinkBlueGreenDeployment's
# spec.template.spec is the spec of the FlinkDeployments it creates (FlinkBlueGreenDeploymentSpec
# .template -> FlinkDeploymentTemplateSpec.spec); its spec.configuration is the blue/green
# controller's own (kubernetes.operator.bluegreen.*), never the job's.
SPEC_PATHS = {"FlinkBlueGreenDeployment": "spec.template.spec"}
# Kinds of the operator's API group that carry no Flink configuration: named and skipped.
NON_CONFIG_KINDS = {
    "FlinkStateSnapshot": "a savepoint or checkpoint request (FlinkStateSnapshot) carries no Flink configuration",
}


@dataclass(slots=True)
class Assignment:
    """One key set on one line. ``key`` is the Flink key it sets; ``written`` how the file names it."""

    key: str | None  # None only for a SQL `RESET;` of every key
    raw: Any
    line: int
    rank: int
    written: str = ""
    reset: bool = False
    parsed: tuple[Any, str | None] | None = None  # (value, error) when the reader already parsed it
    placeholder: str | None = None  # the template placeholder in the value: decided at deploy time
    order: int | None = None  # SQL: the statement's position in its script (jobs see the SETs before them)
    default: bool = False  # a field the file leaves unset: the value is the Kubernetes operator's default
    read_as: str | None = None  # the text Flink gets, when the file's YAML makes it differ from raw
    read_by: str = ""  # who makes read_as of raw, for messages ("Flink reads as YAML 1.2 does")

    def __post_init__(self) -> None:
        if not self.written and self.key is not None:
            self.written = self.key


@dataclass(slots=True)
class Problem:
    line: int | None
    message: str
    code: str
    severity: str = "warning"
    key: str | None = None
    raw: Any = None


@dataclass
class Resource:
    """One FlinkDeployment / FlinkSessionJob document."""

    kind: str
    api_kind: str
    name: str | None
    line: int
    anchor_line: int
    namespace: str | None = None
    deployment_name: str | None = None  # FlinkSessionJob spec.deploymentName
    pipeline_name: str | None = None
    assignments: list[Assignment] = field(default_factory=list)
    job: dict[str, Assignment] = field(default_factory=dict)  # facts name -> field as written
    problems: list[Problem] = field(default_factory=list)


@dataclass
class ParsedFile:
    kind: str
    assignments: list[Assignment] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    jobs: list[SqlJob] = field(default_factory=list)  # SQL: the statements that submit a job, in order


# A placeholder a template engine or a shell fills in at deploy time: {{ .Values.x }} (Helm, Go
# templates), ${VAR} and $VAR (envsubst, shells, the SQL client's variables).
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")
_TEMPLATE_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


def placeholder(raw: Any) -> str | None:
    """The first placeholder in a value as written, or None."""
    if not isinstance(raw, str):
        return None
    match = _PLACEHOLDER.search(raw)
    return match.group() if match else None


def helm_template_line(text: str) -> int | None:
    """The first line holding a Go template action (``{{ ... }}``), or None."""
    for number, line in enumerate(text.splitlines(), 1):
        if _TEMPLATE_ACTION.search(line):
            return number
    return None


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (for optional YAML sections)."""
    return value if isinstance(value, dict) else {}


def as_written(doc: YamlDocument, path: str, value: Any) -> Any:
    """A value as the file writes it: a number, boolean or null as its text in the file (``010``,
    ``on``), strings, mappings and lists as themselves."""
    if value is None or isinstance(value, (str, dict, list)):
        return value
    text = doc.written.get(path)
    return text if text is not None else str(value)


def operator_text(value: Any) -> Any:
    """What the Flink Kubernetes operator hands Flink for a value of a resource, as kubectl read it
    (YAML 1.1: ``010`` is 8, ``on`` and ``y`` are true, ``1e3`` is 1000): the JSON value the API
    server stores, as Jackson's ``asText`` writes it (``ConfigObjectNode.asFlatMap``). A number
    Go writes without a fraction is an integer to Jackson (``1000``), another one a double
    (``1.5``, ``1.0E21``); a list is its items joined with ``;``. A null is left as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else java_double(value)
    if isinstance(value, list):
        return ";".join("" if isinstance(v, (dict, list)) else str(operator_text(v)) for v in value)
    return value


_BY_FLINK = "Flink reads as YAML 1.2 does"
_BY_KUBECTL = "kubectl reads as YAML 1.1 does and the operator hands to Flink"


FLINK_CODE_POINTS = 3 * 1024 * 1024  # snakeyaml-engine's codePointLimit, which Flink does not change


def java_double(value: float) -> str:
    """``Double.toString``: ``1000.0``, ``0.5``, ``1.23456789E7``, ``1.0E-4`` (the text Flink's
    Configuration gives a YAML float), from the shortest digits that read back as the value."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    digits, exponent = _shortest_digits(abs(value))
    if -3 <= exponent < 7:  # 10^-3 <= |value| < 10^7: plain decimal
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """The significant digits of ``repr(value)`` and the power of ten of the first one."""
    mantissa, _, exp = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = (whole + fraction).lstrip("0")
    lead = len(whole.lstrip("0")) - 1 if whole.strip("0") else -(len(fraction) - len(fraction.lstrip("0")) + 1)
    return all_digits.rstrip("0") or "0", lead + (int(exp) if exp else 0)


def flink_text(value: Any) -> Any:
    """The text Flink's ``Configuration`` holds for a value of its YAML 1.2 reading (snakeyaml-
    engine's Java object, as Flink turns it into a string): ``16`` for ``0x10``, ``true`` for
    ``TRUE``, ``1000.0`` for ``1e3``, ``.inf``; ``!!binary`` and ``!!set`` values as YAML writes
    them. Strings, lists and mappings are themselves."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        return java_double(value)
    if isinstance(value, bytes):
        import base64

        return "!!binary |-\n  " + base64.b64encode(value).decode("ascii")
    if isinstance(value, YamlSet):
        return "!!set {" + ", ".join(f"{flink_text(m)}: null" for m in value) + "}"
    return value


_KIND_OF = {bool: "the boolean", int: "the integer", float: "the number", bytes: "binary data"}


class _Flattener:
    """A mapping of Flink keys flattened with dots (``execution: {checkpointing: {interval: 1s}}``
    is ``execution.checkpointing.interval``), as Flink 2.x's GlobalConfiguration and the
    Kubernetes operator both flatten them. An empty mapping sets nothing."""

    def __init__(self, doc: YamlDocument, rank: int, out: list[Assignment], problems: list[Problem]):
        self.doc, self.rank, self.out, self.problems = doc, rank, out, problems
        self.seen: dict[str, int] = {}
        self.merge_paths = {path for path, _ in doc.merge_keys}
        self.unmerged: dict[str, list[str]] = {}  # a `<<` key's path -> the keys Flink sets below it

    def walk(self, data: dict[str, Any], prefix: str, mark_path: str, under_merge: str | None = None) -> None:
        marks, doc, flink = self.doc.marks, self.doc, self.rank == RANK_CONFIG
        # Flink flattens config.yaml in the file's order; the operator flattens the JSON the API
        # server stores, whose keys are sorted: a key set twice (nested and flat) is the later there
        for k, v in data.items() if flink else sorted(data.items()):
            key = f"{prefix}.{k}" if prefix else str(k)
            path = join_key(mark_path, str(k))
            line = marks.get(path, doc.start_line)
            merge = path if path in self.merge_paths else under_merge
            if isinstance(v, dict) and not is_map_key(key):
                self.walk(v, key, path, merge)
                continue
            if (isinstance(v, dict) or (not flink and isinstance(v, list))) and not v:
                continue  # an empty mapping (or, in a resource, list) sets nothing
            if merge is not None:
                self.unmerged.setdefault(merge, []).append(key)
            if key in self.seen:
                first, second = sorted((self.seen[key], line))
                keeps = (
                    "Flink keeps the later one"
                    if flink
                    else (f"the operator keeps line {line}'s (it reads the keys in alphabetical order)")
                )
                self.problems.append(
                    Problem(
                        line,
                        f"{key} is set twice in this file (line {first} and line {second}); {keeps}",
                        "duplicate-key",
                        "warning",
                        key,
                    )
                )
            self.seen[key] = line
            if not flink:
                raw, text = as_written(doc, path, v), operator_text(v)
                a = Assignment(key, raw, line, self.rank)
                if text is not v and text != raw:
                    a.read_as, a.read_by = text, _BY_KUBECTL
                self.out.append(a)
                continue
            text = flink_text(v)
            written = doc.written.get(path)
            raw = written if written is not None and v is not None and not isinstance(v, (bytes, YamlSet)) else text
            a = Assignment(key, raw, line, self.rank)
            if text is not v and text != raw:
                a.read_as, a.read_by = text, _BY_FLINK
            self.out.append(a)

    def merge_problems(self) -> None:
        """A plain ``<<`` key in a config.yaml: YAML 1.1 readers merge it, Flink 2.x does not."""
        for path, line in self.doc.merge_keys:
            keys = self.unmerged.get(path, [])
            meant = [k.replace(".<<.", ".").removeprefix("<<.") for k in keys]
            shown = ", ".join(f"{k} (not {m})" for k, m in zip(keys[:3], meant[:3], strict=True))
            more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
            self.problems.append(
                Problem(
                    line,
                    "'<<' is a YAML merge key, which Flink 2.x does not apply: it reads config.yaml as YAML 1.2, "
                    f"where '<<' is a key like any other, so it sets {shown or 'nothing'}{more}; the keys meant "
                    "stay unset (Flink's defaults apply). Write the keys out instead of merging an anchor",
                    "merge-key",
                    "error",
                    meant[0] if len(meant) == 1 else None,
                )
            )


def read_sql(text: str) -> ParsedFile:
    parsed = ParsedFile(KIND_SQL)
    script = parse_sql(text)
    for s in script.settings:
        parsed.assignments.append(Assignment(s.key, s.value, s.line, RANK_SQL, reset=s.reset, order=s.order))
    for p in script.problems:
        parsed.problems.append(Problem(p.line, p.message, p.code, p.severity))
    parsed.jobs = list(script.jobs)
    return parsed


def read_flink_conf(text: str) -> ParsedFile:
    """A legacy ``flink-conf.yaml`` read line by line, exactly as Flink 1.x reads it.

    ``GlobalConfiguration.loadYAMLResource`` (1.x; ``loadLegacyYAMLResource`` where later versions
    still read the file): cut each line at its first ``#`` (a comment, even inside a value), trim
    it, skip it when blank, split it at the first ``": "`` and trim key and value. A line it cannot
    split, or with an empty key or value, is ignored with a warning in Flink's log. Quotes are
    **not** removed (``"60 s"`` keeps its quote characters), flow syntax (``[a, b]``) is plain
    text, and a later line overrides an earlier one. Flink 1.19+ reads ``config.yaml`` as standard
    YAML, but a ``flink-conf.yaml`` still goes through this parser.
    """
    parsed = ParsedFile(KIND_CONF)
    lines = text.splitlines()
    seen: dict[str, int] = {}
    block_indent: int | None = None  # inside a nested block opened by a `key:` line
    for number, line in enumerate(lines, 1):
        conf = line.split("#", 1)[0]
        stripped = conf.strip()
        if not stripped:
            continue
        indent = len(conf) - len(conf.lstrip())
        if block_indent is not None and indent <= block_indent:
            block_indent = None
        kv = stripped.split(": ", 1)
        if len(kv) == 1:
            if block_indent is not None:
                continue  # a deeper opener of the block already reported
            if stripped.endswith(":") and _next_is_deeper(lines, number, indent):
                block_indent = indent
                key = stripped[:-1].strip()
                parsed.problems.append(
                    Problem(
                        number,
                        f"{key!r} opens a nested block, but Flink 1.x reads flink-conf.yaml line by line as flat "
                        "'key: value' pairs: it ignores this line, and reads each indented 'key: value' line "
                        "below as a key of its own (without the prefix); write flat keys, or use config.yaml "
                        "(Flink 2.x)",
                        "nested-in-flink-conf",
                        "error",
                        key,
                    )
                )
                continue
            parsed.problems.append(
                Problem(
                    number,
                    f"Flink 1.x cannot split {_quoted(stripped)} into key and value (it needs ': ', a colon and a "
                    "space) and ignores the line with a warning in its log: the setting has no effect",
                    "unreadable-line",
                    "error" if ":" in stripped else "warning",
                )
            )
            continue
        key, value = kv[0].strip(), kv[1].strip()
        if not key or not value:
            parsed.problems.append(
                Problem(
                    number,
                    f"{_quoted(stripped)} has an empty {'key' if not key else 'value'}: Flink 1.x ignores the line "
                    "with a warning in its log",
                    "unreadable-line",
                    "error",
                )
            )
            continue
        if key in seen:
            parsed.problems.append(
                Problem(
                    number,
                    f"{key} is set twice in this file (line {seen[key]} and line {number}); Flink keeps the later one",
                    "duplicate-key",
                    "warning",
                    key,
                )
            )
        seen[key] = number
        parsed.assignments.append(Assignment(key, value, number, RANK_CONFIG))
    if not parsed.assignments and not parsed.problems:
        parsed.problems.append(Problem(1, "the file sets no Flink key", "no-flink-settings"))
    return parsed


def _quoted(line: str) -> str:
    """A line of a file quoted in a message: secrets masked first, then cut to 80 characters."""
    return repr(scrub(line, strict=True)[:80])


def _next_is_deeper(lines: list[str], number: int, indent: int) -> bool:
    for line in lines[number:]:
        conf = line.split("#", 1)[0]
        if conf.strip():
            return len(conf) - len(conf.lstrip()) > indent
    return False


def is_legacy_name(display: str) -> bool:
    return display.rsplit("/", 1)[-1].lower() in ("flink-conf.yaml", "flink-conf.yml")


def read_yaml(text: str, display: str) -> ParsedFile:
    """A Flink config file or a Kubernetes manifest; raises InputError when it is not valid YAML
    (naming a Helm template as one, with the remedy). The file is composed once as YAML 1.2 (as
    Flink reads a config.yaml); a file with a document that has ``apiVersion`` and ``kind`` is a
    manifest, read again as kubectl reads it (YAML 1.1 as go-yaml has it: see yamlparse)."""
    from streamwarden.yamlsafe import parse as yamlparse

    try:
        nodes = yamlparse.compose_documents(text, display, "core")
        manifest = any(_is_k8s_node(n) for n in nodes)
        docs = (
            parse_documents(text, display, schema="kubectl")
            if manifest
            else yamlparse.build_documents(nodes, display, "core")
        )
    except InputError as exc:
        line = helm_template_line(text)
        if line is None:
            raise
        raise InputError(
            f"is a Helm template ({{{{ ... }}}} at line {line}), not a manifest: streamwarden reads what Helm "
            "renders. Render it (helm template RELEASE CHART -f VALUES > rendered.yaml) and name the rendered "
            f"file in job.deployment (YAML error: {exc.message})",
            file=display,
            line=line,
        ) from None
    docs = [d for d in docs if d.data is not None]
    if manifest:
        return _read_manifest(docs)
    parsed = ParsedFile(KIND_CONFIG)
    if len(text) > FLINK_CODE_POINTS:
        parsed.problems.append(
            _refused(1, f"it is longer than snakeyaml-engine's limit of {FLINK_CODE_POINTS:,} characters")
        )
    if not docs:
        parsed.problems.append(Problem(1, "the file is empty: it sets no Flink key", "no-flink-settings"))
        return parsed
    if len(docs) > 1:
        parsed.problems.append(
            Problem(
                docs[1].start_line,
                f"{len(docs)} YAML documents in a Flink configuration file: Flink reads a single "
                "document and refuses the file; only the first one is used here",
                "several-documents",
                "error",
            )
        )
    doc = docs[0]
    parsed.problems.extend(_refused(line, reason) for line, reason in doc.refusals)
    if not isinstance(doc.data, dict):
        parsed.problems.append(
            _refused(doc.start_line, "it is not a mapping of Flink keys to values (it sets no Flink key)")
        )
        return parsed
    flattener = _Flattener(doc, RANK_CONFIG, parsed.assignments, parsed.problems)
    flattener.walk(doc.data, "", "")
    flattener.merge_problems()
    return parsed


def _refused(line: int, reason: str) -> Problem:
    return Problem(
        line,
        f"Flink 2.x refuses this config.yaml: {reason}. Its loader (GlobalConfiguration) stops with "
        "'Error parsing YAML configuration', so no Flink process that reads the file starts",
        "flink-refuses-file",
        "error",
    )


def _is_k8s_node(node: Any) -> bool:
    """A composed document with the keys ``apiVersion`` and ``kind``: a Kubernetes manifest."""
    if node.tag != "tag:yaml.org,2002:map":
        return False
    keys = {k.value for k, _ in node.value if isinstance(k.value, str)}
    return "apiVersion" in keys and "kind" in keys


def _is_k8s(data: Any) -> bool:
    return isinstance(data, dict) and "apiVersion" in data and "kind" in data


def _read_manifest(docs: list[YamlDocument]) -> ParsedFile:
    parsed = ParsedFile(KIND_MANIFEST)
    others: list[str] = []
    for doc in docs:
        data = doc.data
        if not _is_k8s(data):
            continue
        api, kind = str(data.get("apiVersion")), str(data.get("kind"))
        if api.startswith("flink.apache.org/") and kind in CR_KINDS:
            parsed.resources.append(_read_resource(doc))
        elif api.startswith("flink.apache.org/"):
            name = mapping(data.get("metadata")).get("name")
            why = NON_CONFIG_KINDS.get(
                kind, f"{kind} is not a Flink resource streamwarden reads Flink configuration from"
            )
            parsed.problems.append(
                Problem(
                    doc.start_line,
                    f"{kind} {name or ''} (line {doc.start_line}) skipped: {why}".replace("  ", " "),
                    "skipped-resource",
                    "info",
                )
            )
        else:
            others.append(f"{kind} at line {doc.start_line}")
    if parsed.resources:
        parsed.kind = parsed.resources[0].kind
    elif not parsed.problems:
        parsed.problems.append(
            Problem(
                docs[0].start_line,
                "no FlinkDeployment, FlinkSessionJob or FlinkBlueGreenDeployment (apiVersion "
                f"flink.apache.org/v1beta1) in this manifest (found {', '.join(others) or 'nothing'}): it sets "
                "no Flink key",
                "no-flink-settings",
            )
        )
    return parsed


def _read_resource(doc: YamlDocument) -> Resource:
    data = doc.data
    meta = mapping(data.get("metadata"))
    base = SPEC_PATHS.get(str(data["kind"]), "spec")
    spec: dict[str, Any] = data
    for part in base.split("."):
        spec = mapping(spec.get(part))
    anchor = doc.marks.get(f"{base}.flinkConfiguration") or doc.marks.get(base) or doc.start_line
    res = Resource(
        kind=CR_KINDS[str(data["kind"])],
        api_kind=str(data["kind"]),
        name=str(meta["name"]) if meta.get("name") is not None else None,
        line=doc.start_line,
        anchor_line=anchor,
        namespace=str(meta["namespace"]) if meta.get("namespace") is not None else None,
        deployment_name=str(spec["deploymentName"]) if spec.get("deploymentName") is not None else None,
    )
    conf = spec.get("flinkConfiguration")
    if isinstance(conf, dict):
        _Flattener(doc, RANK_CR, res.assignments, res.problems).walk(conf, "", f"{base}.flinkConfiguration")
    elif conf is not None:
        res.problems.append(
            Problem(anchor, f"{base}.flinkConfiguration is not a mapping of keys to values", "invalid-value", "error")
        )
    for a in res.assignments:
        if a.key == "pipeline.name" and isinstance(a.raw, str):
            res.pipeline_name = a.raw
    _read_spec_fields(doc, spec, res, base)
    return res


def _field(doc: YamlDocument, path: str, value: Any) -> tuple[Any, int, Any]:
    """A field of the resource: as written, its line, and what the operator reads."""
    raw, read = as_written(doc, path, value), operator_text(value)
    return raw, doc.marks.get(path, doc.start_line), read if read is not value else raw


def _spec_assignment(key: str, raw: Any, line: int, read: Any, **kwargs: Any) -> Assignment:
    a = Assignment(key, raw, line, RANK_CR_FIELD, **kwargs)
    if read != raw:
        a.read_as, a.read_by = read, _BY_KUBECTL
    return a


def _parse_spec(parser: Any, raw: Any) -> tuple[Any, str | None]:
    try:
        return parser(raw), None
    except FlinkValueError as exc:
        return None, str(exc)


_JOB_FIELDS: dict[str, tuple[str, Any, str | None]] = {
    # CR field under spec.job -> (facts name, parser, Flink key the operator sets from it)
    "parallelism": ("parallelism", lambda r: parse_int(r, minimum=1), "parallelism.default"),
    "upgradeMode": (
        "upgrade_mode",
        lambda r: parse_enum(str(r).replace("-", "_"), ("STATELESS", "SAVEPOINT", "LAST_STATE")),
        None,
    ),
    "allowNonRestoredState": (
        "allow_non_restored_state",
        parse_bool,
        "execution.state-recovery.ignore-unclaimed-state",
    ),
    "initialSavepointPath": ("initial_savepoint_path", str, None),
    "savepointRedeployNonce": ("savepoint_redeploy_nonce", lambda r: parse_int(r, maximum=2**63 - 1), None),
    "state": ("state", lambda r: parse_enum(r, ("RUNNING", "SUSPENDED")), None),
}


def _read_spec_fields(doc: YamlDocument, spec: dict[str, Any], res: Resource, base: str) -> None:
    job = mapping(spec.get("job"))
    for name, (fact, parser, target) in _JOB_FIELDS.items():
        if job.get(name) is None:
            continue
        written = f"{base}.job.{name}"
        raw, line, read = _field(doc, written, job[name])
        if _placeholder_problem(res, written, raw, line):
            continue
        value, error = _parse_spec(parser, read)
        res.job[fact] = _spec_assignment(target or written, raw, line, read, written=written, parsed=(value, error))
        if error:
            res.problems.append(Problem(line, f"{written}: {error}", "invalid-value", "error", written, raw))
        elif target:
            res.assignments.append(res.job[fact])
    if job:
        _replicas_parallelism(doc, spec, res, base)
        _operator_job_defaults(doc, job, res, base)
    if spec.get("flinkVersion") is not None:
        raw, line, read = _field(doc, f"{base}.flinkVersion", spec["flinkVersion"])
        res.job["flink_version"] = _spec_assignment(f"{base}.flinkVersion", raw, line, read, parsed=(str(read), None))
    for section, target in (
        ("jobManager", "jobmanager.memory.process.size"),
        ("taskManager", "taskmanager.memory.process.size"),
    ):
        block = mapping(spec.get(section))
        path, memory = _memory_field(block, f"{base}.{section}")
        if path is None:
            continue
        raw, line, read = _field(doc, path, memory)
        if _placeholder_problem(res, path, raw, line):
            continue
        value, error = _parse_spec(lambda r: parse_memory_bytes(r, kubernetes=True), read)
        if error:
            res.problems.append(Problem(line, f"{path}: {error}", "invalid-value", "error", path, raw))
            continue
        res.assignments.append(_spec_assignment(target, raw, line, read, written=path, parsed=(value, None)))


# The Flink Kubernetes operator's defaults for a job (FlinkConfigBuilder.applyJobConfig, for a
# FlinkDeployment with spec.job and every FlinkSessionJob, since release 1.6): set only where the
# effective configuration has no value, so they rank below every file and field.
OPERATOR_LAST_STATE_INTERVAL = "5 min"  # with upgradeMode: last-state (DEFAULT_CHECKPOINTING_INTERVAL)
OPERATOR_RETENTION = "RETAIN_ON_CANCELLATION"  # always
# JobSpec.upgradeMode's default: without upgradeMode the operator upgrades the job from empty state
OPERATOR_UPGRADE_MODE = "stateless"


def _replicas_parallelism(doc: YamlDocument, spec: dict[str, Any], res: Resource, base: str) -> None:
    """``spec.taskManager.replicas`` decides the job's parallelism: the operator sets
    ``parallelism.default`` to replicas x ``taskmanager.numberOfTaskSlots`` and ignores
    ``spec.job.parallelism`` (FlinkConfigBuilder.getParallelism). The slots are the resource's
    ``flinkConfiguration``'s (Flink's default: 1)."""
    replicas = mapping(spec.get("taskManager")).get("replicas")
    if replicas is None:
        return
    written = f"{base}.taskManager.replicas"
    raw, line, read = _field(doc, written, replicas)
    if _placeholder_problem(res, written, raw, line):
        return
    count, error = _parse_spec(lambda r: parse_int(r, minimum=1), read)
    if error:
        res.problems.append(Problem(line, f"{written}: {error}", "invalid-value", "error", written, raw))
        return
    slots_raw = next(
        (
            a.raw if a.read_as is None else a.read_as
            for a in reversed(res.assignments)
            if a.key == "taskmanager.numberOfTaskSlots" and a.rank == RANK_CR
        ),
        1,
    )
    slots, slots_error = _parse_spec(lambda r: parse_int(r, minimum=1), slots_raw)
    if slots_error or placeholder(slots_raw):
        return  # reported (or left to deploy time) where the slots are written
    parallelism = count * slots
    res.assignments = [a for a in res.assignments if a.key != "parallelism.default"]
    job_parallelism = res.job.get("parallelism")
    res.assignments.append(
        Assignment(
            "parallelism.default",
            str(parallelism),
            line,
            RANK_CR_FIELD,
            written=f"{written} x taskmanager.numberOfTaskSlots ({count} x {slots})",
            parsed=(parallelism, None),
        )
    )
    if job_parallelism is not None:
        res.problems.append(
            Problem(
                job_parallelism.line,
                f"{job_parallelism.written} is ignored: with {written} set, the operator runs the job at "
                f"replicas x taskmanager.numberOfTaskSlots = {parallelism}",
                "ignored-field",
                "warning",
                job_parallelism.written,
                job_parallelism.raw,
            )
        )


def _operator_job_defaults(doc: YamlDocument, job: dict[str, Any], res: Resource, base: str) -> None:
    job_line = doc.marks.get(f"{base}.job", res.anchor_line)
    if job.get("upgradeMode") is None:  # (a placeholder or an invalid value is no default: left as it is)
        res.job["upgrade_mode"] = Assignment(
            f"{base}.job.upgradeMode",
            None,
            job_line,
            RANK_OPERATOR_DEFAULT,
            parsed=(OPERATOR_UPGRADE_MODE, None),
            default=True,
        )
    res.assignments.append(
        Assignment(
            "execution.checkpointing.externalized-checkpoint-retention",
            OPERATOR_RETENTION,
            job_line,
            RANK_OPERATOR_DEFAULT,
            written=f"{base}.job (the Kubernetes operator's default)",
        )
    )
    mode = res.job.get("upgrade_mode")
    if mode is not None and mode.parsed is not None and mode.parsed[0] == "last_state":
        res.assignments.append(
            Assignment(
                "execution.checkpointing.interval",
                OPERATOR_LAST_STATE_INTERVAL,
                mode.line,
                RANK_OPERATOR_DEFAULT,
                written=f"{mode.written}: last-state (the Kubernetes operator's default interval)",
            )
        )


def placeholder_message(key: str, found: str, line: int) -> str:
    return (
        f"{key} is set to a placeholder ({found}, line {line}): its value is decided at deploy time, so "
        "no rule judges it here; check the rendered configuration (e.g. the output of helm template or "
        "envsubst) to have it judged"
    )


def _placeholder_problem(res: Resource, written: str, raw: Any, line: int) -> bool:
    found = placeholder(raw)
    if found is None:
        return False
    res.problems.append(Problem(line, placeholder_message(written, found, line), "placeholder", "info", written, raw))
    return True


def _memory_field(block: dict[str, Any], prefix: str) -> tuple[str | None, Any]:
    """Where the operator takes a JobManager/TaskManager's process memory from.

    FlinkConfigBuilder.applyResourceConfig: the Kubernetes ``resources`` block wins whenever it has
    any request or limit (the deprecated ``resource`` block is then ignored, memory or not); its
    memory is ``requests.memory``, else ``limits.memory`` (ResourceConfigUtils.getRequestOrLimit).
    """
    resources = mapping(block.get("resources"))
    requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
    if requests or limits:
        for part, values in (("requests", requests), ("limits", limits)):
            if values.get("memory") is not None:
                return f"{prefix}.resources.{part}.memory", values["memory"]
        return None, None
    resource = mapping(block.get("resource"))
    if resource.get("memory") is not None:
        return f"{prefix}.resource.memory", resource["memory"]
    return None, None
