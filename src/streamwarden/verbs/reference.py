"""The contract reference (docs/contract-reference.md), generated from the contract's JSON Schema
and the built-in policies (scripts/update_contract_reference.py writes it; a test keeps it fresh).

Which rules read a field is found by a static scan of the built-in Rego, rule by rule:

1. every policy file is cut into its top-level rules and functions; a ``deny`` / ``warn`` /
   ``info`` body that emits ``"rule": "SW-..."`` is that rule's entry point;
2. its closure is the entry point plus every rule or function of the package (and of ``lib`` and
   the other imported packages, or named by its full ``data.`` path) that it names, transitively;
3. in the closure, a field is read when it is reached from ``input.contract`` or
   ``input.base.contract`` — directly (``input.contract.checkpoint.interval``), through
   ``object.get(..., "key")`` / ``object.get(..., ["a", "b"])``, through a name bound to such a
   value (``_ckpt := object.get(input.contract, "checkpoint", {})``, ``some idx, s in ...``), or
   through a function called with the contract; and when the rule names it as the ``path`` of its
   finding (``sprintf("state.operators[%d].ttl", ...)``);
4. a key computed at run time (``input.contract.checkpoint[s.setting]``,
   ``sprintf("checkpoint.%s", ...)``) stands for those fields of that object whose names appear as
   string literals in the closure.

A scan of text is not an evaluator: it may list a rule that only passes a field on, and miss one
that reaches a field in a way the patterns above do not follow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from streamwarden.core.escape import doc_cell
from streamwarden.core.units import format_duration
from streamwarden.engine.policyset import PolicySet
from streamwarden.flink.config import BY_KEY

Schema = dict[str, Any]

# Contract fields whose value is a Flink setting: where the repository and the contract leave it
# unset, the job runs with Flink's default (src/streamwarden/flink/config.py).
FLINK_KEYS = {
    "job.parallelism": "parallelism.default",
    "job.max_parallelism": "pipeline.max-parallelism",
    "job.restart_strategy": "restart-strategy.type",
    "state.backend": "state.backend.type",
    "state.incremental": "execution.checkpointing.incremental",
    "state.auto_generated_uids": "pipeline.auto-generate-uids",
    "state.allow_non_restored_state": "execution.state-recovery.ignore-unclaimed-state",
    "checkpoint.interval": "execution.checkpointing.interval",
    "checkpoint.mode": "execution.checkpointing.mode",
    "checkpoint.timeout": "execution.checkpointing.timeout",
    "checkpoint.min_pause": "execution.checkpointing.min-pause",
    "checkpoint.max_concurrent": "execution.checkpointing.max-concurrent-checkpoints",
    "checkpoint.storage": "execution.checkpointing.dir",
    "checkpoint.externalized": "execution.checkpointing.externalized-checkpoint-retention",
    "checkpoint.num_retained": "execution.checkpointing.num-retained",
    "checkpoint.unaligned": "execution.checkpointing.unaligned.enabled",
    "checkpoint.tolerable_failures": "execution.checkpointing.tolerable-failed-checkpoints",
}
_DURATION_KEYS = {"checkpoint.interval", "checkpoint.timeout", "checkpoint.min_pause"}
_FORMAT_DEFS = (
    "duration",
    "size",
    "date",
    "timestamp",
    "identifier",
    "tableIdentifier",
    "relativePath",
    "fieldType",
    "partitionTransform",
    "ruleId",
    "flinkJobId",
)


# ---------------------------------------------------------------- the schema, field by field


@dataclass
class Field:
    path: str
    schema: Schema
    ref: str | None  # the $defs name the field refers to
    required: bool
    children: list[str] = field(default_factory=list)


def _deref(schema: Schema, root: Schema) -> tuple[Schema, str | None]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.rsplit("/", 1)[1]
        merged = {**root["$defs"][name], **{k: v for k, v in schema.items() if k != "$ref"}}
        return merged, name
    return schema, None


def fields(root: Schema) -> dict[str, Field]:
    """Every field of the contract in document order, ``[]`` marking the items of a list."""
    out: dict[str, Field] = {}

    def walk(schema: Schema, prefix: str) -> None:
        required = set(schema.get("required") or [])
        for name, sub in (schema.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            s, ref = _deref(sub, root)
            out[path] = Field(path, s, ref, name in required)
            if prefix in out:
                out[prefix].children.append(name)
            elif prefix.endswith("[]") and prefix[:-2] in out:
                out[prefix[:-2]].children.append(name)
            if "properties" in s:
                walk(s, path)
            items = s.get("items")
            if isinstance(items, dict):
                item, _ = _deref(items, root)
                if "properties" in item:
                    walk(item, path + "[]")

    walk(root, "")
    return out


def _is_list(f: Field) -> bool:
    t = f.schema.get("type")
    return t == "array" or (isinstance(t, list) and "array" in t)


# ---------------------------------------------------------------- the policies, rule by rule

_TOP = re.compile(r"^([A-Za-z_]\w*)", re.MULTILINE)
_IMPORT = re.compile(r"^import\s+data\.([\w.]+?)(?:\s+as\s+(\w+))?\s*$", re.MULTILINE)
_PACKAGE = re.compile(r"^package\s+([\w.]+)", re.MULTILINE)
_LITERAL = re.compile(r"\"([^\"\\]*)\"")
_STRING = re.compile(r"\"([A-Za-z_][A-Za-z0-9_]*)\"")
_FUNC_HEAD = re.compile(r"^([A-Za-z_]\w*)\(([^)]*)\)")


@dataclass
class _Block:
    package: str
    name: str
    text: str


def _blocks(source: str) -> list[_Block]:
    package_m = _PACKAGE.search(source)
    package = package_m.group(1) if package_m else ""
    starts = [m for m in _TOP.finditer(source) if m.group(1) not in ("package", "import")]
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(source)
        text = "\n".join(line for line in source[m.start() : end].splitlines() if not line.lstrip().startswith("#"))
        out.append(_Block(package, m.group(1), text))
    return out


def _closure(entry: _Block, by_package: dict[str, dict[str, list[_Block]]], imports: dict[str, str]) -> list[_Block]:
    seen: set[tuple[str, str]] = set()
    out = [entry]
    todo = [entry]
    while todo:
        block = todo.pop()
        names = by_package.get(block.package, {})
        for token in set(re.findall(r"\b([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?", block.text)):
            first, second = token
            targets: list[tuple[str, str]] = []
            if first in names:
                targets.append((block.package, first))
            if second and first in imports and second in by_package.get(imports[first], {}):
                targets.append((imports[first], second))
            targets += [  # a rule named by its full path: data.streamwarden.deployment.ckpt_settings
                (pkg, name)
                for pkg, name in re.findall(r"\bdata\.([A-Za-z_][\w.]*)\.([A-Za-z_]\w*)", block.text)
                if name in by_package.get(pkg, {})
            ]
            for key in targets:
                if key in seen or key[1] in ("deny", "warn", "info"):
                    continue
                seen.add(key)
                for b in by_package[key[0]][key[1]]:
                    out.append(b)
                    todo.append(b)
    return out


_ROOTS = ("input.base.contract", "input.contract")
_BIND = re.compile(r"\bsome\s+(?:\w+\s*,\s*)?(\w+)\s+in\s+|^\s*(\w+)\s*:=\s*")


class _Scanner:
    """Contract field paths a piece of Rego reaches (see the module docstring)."""

    def __init__(self, known: dict[str, Field]) -> None:
        self.known = known

    def resolve(self, base: str, rest: str) -> str:
        """``base`` (a schema path or "") followed by Rego selectors ``.a["b"][i]``."""
        path = base
        for m in re.finditer(r"\.([A-Za-z_]\w*)|\[\s*\"([^\"]+)\"\s*\]|\[([^\]]*)\]", rest):
            key = m.group(1) or m.group(2)
            if key is not None:
                nxt = f"{path}.{key}" if path else key
                if nxt not in self.known:
                    break
                path = nxt
            elif path in self.known and _is_list(self.known[path]):
                path += "[]"
            elif path in self.known and not self.known[path].children:
                return path  # a key of a map (table.properties)
            else:
                return path + ".*" if path else path  # a key computed at run time
        return path

    def of_get(self, base: str, arg: str) -> str:
        keys = re.findall(r"\"([^\"]+)\"", arg)
        if arg.strip().startswith("["):
            return self.resolve(base, "".join(f".{k}" for k in keys))
        if keys and arg.strip().startswith('"'):
            return self.resolve(base, f".{keys[0]}")
        return self.resolve(base, "[x]") if base in self.known and not _is_list(self.known[base]) else base

    def refs(self, line: str, aliases: dict[str, str]) -> list[tuple[int, str]]:
        """(position, field path) of every reach into the contract on one line."""
        roots = "|".join(re.escape(r) for r in _ROOTS)
        names = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
        root = rf"(?:{roots}{'|' + names if names else ''})"
        ref = re.compile(rf"(?<![\w.])({root})((?:\.[A-Za-z_]\w*|\[[^\]\[]*\])*)")
        get = re.compile(rf"object\.get\(\s*({root})((?:\.[A-Za-z_]\w*)*)\s*,\s*(\[[^\]]*\]|\"[^\"]*\"|[\w.]+)")
        out: list[tuple[int, str]] = []
        for m in get.finditer(line):
            base = self._base(m.group(1), aliases)
            out.append((m.start(), self.of_get(self.resolve(base, m.group(2)), m.group(3))))
        for m in ref.finditer(line):
            if not line[: m.start()].endswith("object.get("):
                out.append((m.start(), self.resolve(self._base(m.group(1), aliases), m.group(2))))
        return [(pos, path) for pos, path in out if path]

    def scan(self, text: str, aliases: dict[str, str]) -> tuple[set[str], dict[str, str]]:
        """Field paths ``text`` reaches, and ``aliases`` extended by the names it binds."""
        aliases = dict(aliases)
        found: set[str] = set()
        for line in text.splitlines():
            at = dict(self.refs(line, aliases))
            bound = False
            for b in _BIND.finditer(line):
                path = at.get(b.end())
                if path:
                    iterated = b.group(1) is not None
                    aliases[b.group(1) or b.group(2)] = path + "[]" if iterated and self._is_list(path) else path
                    bound = True
            found.update(at.values())
            if bound:  # `{b.job | some b in ...}` uses the name before it binds it
                found.update(p for _, p in self.refs(line, aliases))
        return found, aliases

    def _is_list(self, path: str) -> bool:
        return path in self.known and _is_list(self.known[path])

    @staticmethod
    def _base(token: str, aliases: dict[str, str]) -> str:
        return "" if token in _ROOTS else aliases[token]


def rules_by_field(policy_set: PolicySet, known: dict[str, Field]) -> dict[str, set[str]]:
    """Field path -> ids of the built-in rules whose closure reads it or reports at it."""
    blocks: list[_Block] = []
    imports: dict[str, dict[str, str]] = {}
    for f in policy_set.files:
        if not f.builtin or f.is_test:
            continue
        bs = _blocks(f.source)
        blocks += bs
        for m in _IMPORT.finditer(f.source):
            pkg = m.group(1)
            imports.setdefault(f.package, {})[m.group(2) or pkg.rsplit(".", 1)[1]] = pkg
    by_package: dict[str, dict[str, list[_Block]]] = {}
    for b in blocks:
        by_package.setdefault(b.package, {}).setdefault(b.name, []).append(b)
    scanner = _Scanner(known)
    top_aliases: dict[str, dict[str, str]] = {}
    for _ in range(2):  # package-level names bound to a part of the contract (in any file order)
        for b in blocks:
            if b.name not in ("deny", "warn", "info") and not _FUNC_HEAD.match(b.text):
                pkg = top_aliases.setdefault(b.package, {})
                pkg.update(scanner.scan(b.text.splitlines()[0], pkg)[1])
    out: dict[str, set[str]] = {}
    for entry in blocks:
        if entry.name not in ("deny", "warn", "info"):
            continue
        body_literals = set(_LITERAL.findall(entry.text))
        ids = body_literals & set(policy_set.rules)
        if not ids:
            continue
        closure = _closure(entry, by_package, imports.get(entry.package, {}))
        literals = {s for b in closure for s in _STRING.findall(b.text)}
        paths: set[str] = set()
        contract_funcs = {
            name for b in closure for name in re.findall(r"\b(\w+)\(\s*input\.(?:base\.)?contract\s*[,)]", b.text)
        }
        for b in closure:
            aliases = dict(top_aliases.get(b.package, {}))
            head = _FUNC_HEAD.match(b.text)
            if head and head.group(1) in contract_funcs:
                aliases[head.group(2).split(",")[0].strip()] = ""
            paths |= scanner.scan(b.text, aliases)[0]
        for text in body_literals:  # the path of the finding, as a string or a sprintf template
            paths.add(re.sub(r"\[%d\]|\[\d+\]", "[]", text).replace("%s", "*"))
        for p in paths:
            for q in _expand(p, known, literals):
                out.setdefault(q, set()).update(ids)
    return out


def _expand(path: str, known: dict[str, Field], literals: set[str]) -> Iterable[str]:
    """A path as written in a rule -> the schema fields it stands for (``*``: a computed key)."""
    if path.endswith("[]") and path[:-2] in known and path not in known:
        path = path[:-2]  # an item of a list of scalars: the list's row
    if "*" not in path:
        return [path] if path in known else []
    pattern = re.compile(re.escape(path).replace(r"\*", r"([A-Za-z_]\w*)"))
    out = []
    for candidate in known:
        m = pattern.fullmatch(candidate)
        if m and all(g in literals for g in m.groups()):
            out.append(candidate)
    return out


# ---------------------------------------------------------------- rendering


def _anchor(name: str) -> str:
    return f"[{name}](#{name.lower()})"


def _type(f: Field) -> str:
    s = f.schema
    if f.ref in _FORMAT_DEFS:
        return _anchor(f.ref)
    if "enum" in s:
        return "enum"
    if "const" in s:
        return "constant"
    t = s.get("type")
    if isinstance(t, list) and "items" not in s:
        return " or ".join(t)
    if t == "array" or (isinstance(t, list) and "array" in t):
        item, ref = _deref(s.get("items") or {}, {"$defs": _ROOT_DEFS})
        inner = _anchor(ref) if ref in _FORMAT_DEFS else ("object" if "properties" in item else str(item.get("type")))
        lst = f"list of {inner}"
        return f"{inner} or {lst}" if isinstance(t, list) else lst
    if t == "object" and "properties" not in s:
        return "map of string to string, boolean or number"
    if isinstance(t, list):
        return " or ".join(t)
    return str(t)


def _allowed(f: Field) -> str:
    s = f.schema
    if "enum" in s:
        return ", ".join(f"`{v}`" for v in s["enum"])
    if "const" in s:
        return f"`{s['const']}`"
    bounds = [s.get("minimum"), s.get("maximum")]
    if bounds[0] is not None and bounds[1] is not None:
        return f"{bounds[0]} to {bounds[1]}"
    if bounds[0] is not None:
        return f"≥ {bounds[0]}"
    if s.get("minItems") and s.get("type") == "array":
        extra = ", no duplicates" if s.get("uniqueItems") else ""
        return f"at least {s['minItems']} item{'s' if s['minItems'] > 1 else ''}{extra}"
    if s.get("uniqueItems") and s.get("type") == "array":
        return "no duplicates"
    return ""


def _default(path: str, schema: Schema | None = None) -> str:
    if schema is not None and "default" in schema and schema["default"] != {}:
        value = schema["default"]
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        return f"`{shown}` (filled in when absent)"
    key = FLINK_KEYS.get(path)
    if key is None:
        return ""
    value = BY_KEY[key].default
    if value is None:
        shown = "unset"
    elif isinstance(value, bool):
        shown = str(value).lower()
    elif path in _DURATION_KEYS and isinstance(value, int):
        shown = format_duration(value)
    else:
        shown = str(value)
    as_contract = _contract_value(path, value)
    if as_contract is not None and as_contract != shown:  # Flink's value in the field's own words
        return f"Flink: {as_contract} (`{key}`: {shown})"
    return f"Flink: {shown} (`{key}`)"


def _contract_value(path: str, value: Any) -> str | None:
    """The contract value a Flink value is (``no_externalized_checkpoints`` -> ``none``, the uid
    switch ``true`` -> ``allowed``), as ``streamwarden init`` writes it; None when it has none."""
    from streamwarden.verbs.init import DEPLOYMENT_FIELDS

    for field_path, _key, convert, _worth in DEPLOYMENT_FIELDS:
        if ".".join(field_path) == path:
            converted = convert(value)
            return converted if isinstance(converted, str) else None
    return None


_ROOT_DEFS: dict[str, Any] = {}


def render(schema: Schema, policy_set: PolicySet) -> str:
    _ROOT_DEFS.clear()
    _ROOT_DEFS.update(schema["$defs"])
    known = fields(schema)
    rules = rules_by_field(policy_set, known)
    out = [
        "# Contract reference",
        "",
        "<!-- Generated by scripts/update_contract_reference.py from contracts/schema/"
        "pipeline-contract.v1.schema.json and the built-in policies; do not edit by hand. -->",
        "",
        "Every field of a pipeline contract (`apiVersion: streamwarden/v1`, `kind: PipelineContract`),",
        "from the JSON Schema (`contracts/schema/pipeline-contract.v1.schema.json`, also printed by",
        "`streamwarden schema contract`). Unknown keys are errors. A section that is absent is not",
        "checked, unless a rule says its absence is the violation or the schema gives it a default",
        "(`schema_evolution`: absent means `compatibility: backward` with the consumers protected).",
        "`[]` marks the items of a list.",
        "",
        "Columns:",
        "",
        "- **type**: a JSON type, or one of the [formats](#formats) below (durations, sizes, dates, ...).",
        "- **req.**: required within its parent when the parent is present.",
        "- **allowed**: the enumeration, constant or bounds the schema sets.",
        "- **default**: where the schema sets a default (the `schema_evolution` section), an absent",
        "  field is filled in with it in the policy input (`input.contract`), so `facts` shows what is in",
        "  force; every other absent field stays absent. Where the field stands for a Flink setting, the",
        "  column gives Flink's default for that key: what the job runs with when the deployment files do",
        "  not set it either (the repository facts carry it, and the rules comparing contract and",
        "  deployment use it).",
        "- **rules**: the built-in rules that read the field, found by a static scan of the Rego",
        "  policies, rule by rule: the rule's body and every rule or function it uses, transitively;",
        "  a field counts when it is reached from `input.contract` or `input.base.contract` (directly,",
        "  with `object.get`, or through a name bound to a part of the contract) or named as the",
        "  `path` of the rule's finding. A key computed at run time stands for the fields whose names",
        "  appear as string literals in that code. A text scan is not an evaluator: it may list a rule",
        "  that only passes a field on, or miss an unusual way of reaching one. What each rule checks:",
        "  `streamwarden policy doc`.",
        "",
    ]
    top = [p for p in known if "." not in p]
    for section in top:
        f = known[section]
        out += [f"## `{section}`", "", doc_cell(f.schema.get("description", "")), ""]
        out += [
            "| field | type | req. | allowed | default | rules | description |",
            "|---|---|---|---|---|---|---|",
        ]
        for path in [p for p in known if p == section or p.startswith(section + ".") or p.startswith(section + "[]")]:
            g = known[path]
            ids = ", ".join(sorted(rules.get(path, set()) | rules.get(path + "[]", set()), key=_rule_key))
            out.append(
                f"| `{path}` | {_type(g)} | {'yes' if g.required else ''} | {doc_cell(_allowed(g))} | "
                f"{doc_cell(_default(path, g.schema))} | {ids} | {doc_cell(g.schema.get('description', ''))} |"
            )
        out.append("")
    out += ["## Formats", "", "Value formats that several fields share (the schema's `$defs`).", ""]
    for name in _FORMAT_DEFS:
        d = schema["$defs"][name]
        out += [f"### {name}", "", doc_cell(d.get("description", ""))]
        if "pattern" in d:
            out += ["", f"Pattern: `{d['pattern']}`"]
        if d.get("examples"):
            out += ["", "Examples: " + ", ".join(f"`{e}`" for e in d["examples"])]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _rule_key(rule_id: str) -> tuple[str, int]:
    prefix, _, num = rule_id.rpartition("-")
    return (prefix, int(num) if num.isdigit() else 0)
