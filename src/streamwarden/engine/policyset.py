"""Policy files, their packages and rule sets, and the rule catalog read from ``# METADATA``.

regorus cannot give METADATA back, so the blocks are parsed here: YAML in comments directly above
a rule (OPA's format), read as every YAML file is (duplicate keys refused). ``custom.id`` is the
rule id; ``custom.severity`` and ``custom.remediation`` complete the descriptor. Two keys carry
what the engine and the verbs need to know about a policy, so no Python code names a rule:

- ``custom.requires`` (a list of conditions, once per file): the file's rules can only fire when
  one of them holds for the input (``condition_holds``); the regorus engine leaves the file out
  otherwise. It sits in a block of its own above the file's first rule (or above ``package`` in a
  package of one file: OPA refuses two package-scoped blocks for one package).
- ``custom.kind`` (per rule): ``diff`` for a rule that compares the base branch with the head;
  its findings classify the changes in ``diff`` (``PolicySet.diff_rule_ids``).

Why one module of this size: the policy set is one object: files, packages, METADATA, the rule
catalog and the selection by ``custom.requires`` are read together from one parse of each file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.core.errors import InputError, PolicyError
from streamwarden.core.escape import shown_name
from streamwarden.core.resources import policies_dir
from streamwarden.engine import timeread
from streamwarden.yamlsafe.read import parse_documents

RULE_SETS = ("deny", "warn", "info")
SET_SEVERITY = {"deny": "error", "warn": "warning", "info": "info"}
SEVERITIES = ("error", "warning", "info")
RESERVED_PREFIX = "SW-"
# built-ins a policy may not call: time only as input.now_ms (a --now replay is exact), no randomness,
# no I/O (README: custom policies are deterministic and bounded)
FORBIDDEN_CALLS = ("time.now_ns", "http.send", "opa.runtime")
FORBIDDEN_NAMESPACES = ("rand", "uuid", "net")

_PACKAGE = re.compile(r"^package\s+([A-Za-z_][\w.]*)", re.MULTILINE)  # built-in files only
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SET_HEAD = re.compile(r"^(deny|warn|info)\b", re.MULTILINE)  # built-in files only
_TEST_HEAD = re.compile(r"^(test_\w+)\b", re.MULTILINE)
_RULE_HEAD = re.compile(r"^([A-Za-z_]\w*)")
_RULE_ID_LITERAL = re.compile(r"\"rule\"\s*:\s*\"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)\"")
_LEGACY_REQUIRES = re.compile(r"^[ \t]*#[ \t]*streamwarden:requires\b", re.MULTILINE)
_CONDITION = re.compile(r"^(facts\.[a-z][a-z0-9_]*|base|mode\.[a-z][a-z0-9_]*)$")
KINDS = ("diff",)  # custom.kind values
_REQUIRES_HINT = (
    "e.g. a block of its own above the first rule:\n# METADATA\n# custom:\n#   requires: [facts.flink]\n"
    "(conditions: facts.SOURCE such as facts.iceberg, base, or mode.NAME such as mode.gate)"
)


@dataclass
class MetadataBlock:
    """A ``# METADATA`` block: its YAML, the rule head below it (``package`` for a block above the
    package line), that head's line, and the line of each YAML field (``custom.requires``: 12)."""

    meta: dict[str, Any]
    head: str
    line: int
    marks: dict[str, int] = field(default_factory=dict)

    def line_of(self, path: str) -> int:
        return self.marks.get(path, self.line)


@dataclass
class RuleDescriptor:
    id: str
    title: str
    severity: str
    description: str = ""
    remediation: str = ""
    example: str = ""
    package: str = ""
    rule_set: str = ""
    file: str = ""
    line: int = 0
    builtin: bool = True
    kind: str = ""  # custom.kind: "diff" for a rule that compares the base with the head

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity,
            "description": self.description,
            "remediation": self.remediation,
            "example": self.example,
            "package": self.package,
            "file": self.file,
        }


@dataclass
class PolicyFile:
    path: Path
    display: str
    source: str
    package: str
    builtin: bool
    is_test: bool
    rule_sets: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    # METADATA custom.requires: the file can only produce findings when one of the conditions
    # holds for the input (see ``condition_holds``); empty means always evaluated.
    requires: tuple[str, ...] = ()
    metadata: list[MetadataBlock] = field(default_factory=list)  # every METADATA block, parsed once
    # where the file may read input.now_ms (line ranges of its read sites) and the data paths it
    # may reference (engine/timeread.py): the result cache asks which read sites an evaluation ran
    now_reads: tuple[tuple[int, int], ...] = ()
    data_refs: tuple[str, ...] = ()


@dataclass
class PolicySet:
    files: list[PolicyFile]
    rules: dict[str, RuleDescriptor]
    known_ids: set[str]

    @property
    def runtime_files(self) -> list[PolicyFile]:
        return [f for f in self.files if not f.is_test]

    @property
    def entrypoints(self) -> list[tuple[str, str]]:
        return entrypoints_of(self.runtime_files)

    def files_for(self, input_doc: dict[str, Any]) -> list[PolicyFile]:
        """The runtime files that can fire on ``input_doc``: a file whose ``requires`` conditions
        all fail is left out (a static check skips the live, diff and gate rules). Each distinct
        condition is tested once per document, and the selection is kept per set of conditions
        that hold (a run asks for thousands of documents and sees a few such sets)."""
        holding = frozenset(c for c in self._conditions if condition_holds(c, input_doc))
        chosen = self._selections.get(holding)
        if chosen is None:
            chosen = self._selections[holding] = [
                f for f in self.runtime_files if not f.requires or any(c in holding for c in f.requires)
            ]
        return list(chosen)

    @functools.cached_property
    def _conditions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for f in self.runtime_files for c in f.requires))

    @functools.cached_property
    def _selections(self) -> dict[frozenset[str], list[PolicyFile]]:
        return {}

    def package_files(self, package: str) -> list[str]:
        return [f.display for f in self.files if f.package == package and not f.is_test]

    def is_custom_package(self, package: str) -> bool:
        return package in self._custom_packages

    @property
    def has_custom(self) -> bool:
        """Custom policies are loaded (then the engine compiles the whole set at once: the built-in
        files compile together, as the test suite checks, and are compiled as documents select them)."""
        return bool(self._custom_packages)

    @functools.cached_property
    def _custom_packages(self) -> frozenset[str]:
        """The packages a custom file declares (asked for every finding: computed once)."""
        return frozenset(f.package for f in self.files if not f.builtin)

    def diff_rule_ids(self) -> set[str]:
        """The rules whose METADATA says ``kind: diff``: they compare the base with the head."""
        return {r.id for r in self.rules.values() if r.kind == "diff"}

    def is_diff_rule(self, rule: str) -> bool:
        desc = self.rules.get(rule)
        return desc is not None and desc.kind == "diff"


def entrypoints_of(files: list[PolicyFile]) -> list[tuple[str, str]]:
    """(package, rule set) for every deny/warn/info set the files define, in file order, once each."""
    seen: dict[tuple[str, str], None] = {}
    for f in files:
        for s in f.rule_sets:
            seen[(f.package, s)] = None
    return list(seen)


def condition_holds(condition: str, input_doc: dict[str, Any]) -> bool:
    """``facts.NAME``: that fact source is in play (configured, or available anyway);
    ``base``: the input has a base-branch document; ``mode.NAME``: the run's mode is NAME."""
    kind, _, name = condition.partition(".")
    if kind == "base":
        return isinstance(input_doc.get("base"), dict)
    if kind == "mode":
        return input_doc.get("mode") == name
    facts = input_doc.get("facts")
    source = facts.get(name) if isinstance(facts, dict) else None
    if not isinstance(source, dict):
        return False
    return source.get("configured") is not False or source.get("available") is True


def parse_requires(metadata: list[MetadataBlock], source: str, display: str) -> tuple[str, ...]:
    """The file's ``custom.requires`` conditions (at most one METADATA block declares them). The
    comment form this replaced (``# streamwarden:requires``) is an error, never silently ignored."""
    legacy = _LEGACY_REQUIRES.search(source)
    if legacy:
        raise PolicyError(
            "`# streamwarden:requires` is no longer read: declare the conditions in METADATA (custom.requires)",
            file=display,
            line=source[: legacy.start()].count("\n") + 1,
            hint=_REQUIRES_HINT,
        )
    found: list[tuple[Any, int]] = []
    for block in metadata:
        custom = block.meta.get("custom")
        if isinstance(custom, dict) and "requires" in custom:
            found.append((custom["requires"], block.line_of("custom.requires")))
    if not found:
        return ()
    if len(found) > 1:
        raise PolicyError(
            f"custom.requires is declared twice in one file (first at line {found[0][1]})",
            file=display,
            line=found[1][1],
            hint="the conditions are the file's: declare them once, in a block above its first rule",
        )
    value, line = found[0]
    if not isinstance(value, list) or not value:
        raise PolicyError(
            "custom.requires must be a non-empty list of conditions", file=display, line=line, hint=_REQUIRES_HINT
        )
    for w in value:
        if not isinstance(w, str) or not _CONDITION.match(w):
            raise PolicyError(
                f"unknown condition {w!r} in custom.requires", file=display, line=line, hint=_REQUIRES_HINT
            )
    return tuple(dict.fromkeys(value))


def parse_metadata(source: str, display: str) -> list[MetadataBlock]:
    """Every ``# METADATA`` block, with the rule head name below it and its line."""
    lines = source.splitlines()
    out: list[MetadataBlock] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "# METADATA":
            i += 1
            continue
        start = i + 1
        j = start
        body: list[str] = []
        while j < len(lines) and lines[j].lstrip().startswith("#"):
            text = lines[j].lstrip()[1:]
            body.append(text[1:] if text.startswith(" ") else text)
            j += 1
        meta, marks = _metadata_yaml("\n".join(body), display, start)
        head = ""
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines):
            m = _RULE_HEAD.match(lines[j])
            head = m.group(1) if m else ""
        out.append(MetadataBlock(meta, head, j + 1, marks))
        i = j
    return out


def _metadata_yaml(text: str, display: str, offset: int) -> tuple[dict[str, Any], dict[str, int]]:
    """A METADATA block read as every YAML file is (yamlsafe: size, depth and alias limits,
    duplicate keys refused); an error names the policy file and the line in it."""
    try:  # the block's lines keep their line numbers in the file
        docs = [d for d in parse_documents("\n" * offset + text, display) if d.data is not None]
    except InputError as exc:
        raise PolicyError(
            f"METADATA block: {exc.message}", file=display, line=exc.line or offset, hint=exc.hint
        ) from None
    if len(docs) > 1:
        raise PolicyError("METADATA block holds several YAML documents", file=display, line=docs[1].start_line)
    meta = docs[0].data if docs else {}
    if not isinstance(meta, dict):
        raise PolicyError("METADATA block must be a YAML mapping", file=display, line=offset + 1)
    return meta, docs[0].marks if docs else {}


def _read_policy(path: Path, display: str, builtin: bool) -> PolicyFile:
    return parse_policy(_policy_source(path, display), display, builtin, path)


def _policy_source(path: Path, display: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"cannot read policy: {exc}", file=display) from None


def parse_policy(source: str, display: str, builtin: bool, path: Path | None = None) -> PolicyFile:
    """A policy file. A custom file's package and rule sets are the ones the Rego parser reads
    (``analyze_module``), so the regorus and OPA engines and the reserved-package check all see the
    same package, and an indented ``deny`` is evaluated; the built-in files (ours, tested to agree
    with the parser) are read with a quick text scan."""
    is_test = display.endswith("_test.rego")
    if builtin:
        m = _PACKAGE.search(source)
        if not m:
            raise PolicyError("no `package` declaration", file=display, line=1)
        package, line = m.group(1), source[: m.start()].count("\n") + 1
        rule_sets = sorted(set(_SET_HEAD.findall(source)))
        tests = list(dict.fromkeys(_TEST_HEAD.findall(source)))
        reads = _NO_READS if is_test else module_reads(source, display)
    else:
        info = analyze_module(source, display)
        package, line, rule_sets, tests, reads = info.package, info.line, info.rule_sets, info.tests, info.reads
    metadata = [] if is_test else parse_metadata(source, display)
    if not builtin and is_reserved_package(package):
        raise PolicyError(
            f"package {package} is reserved for the built-in policies",
            file=display,
            line=line,
            hint="name your package after your team, e.g. `package acme.pipelines`",
        )
    return PolicyFile(
        path=path or Path(display),
        display=display,
        source=source,
        package=package,
        builtin=builtin,
        is_test=is_test,
        rule_sets=rule_sets if not is_test else [],
        tests=tests,
        requires=() if is_test else parse_requires(metadata, source, display),
        metadata=metadata,
        now_reads=() if is_test else reads.now,
        data_refs=() if is_test else reads.refs,
    )


def is_reserved_package(package: str) -> bool:
    return package == "streamwarden" or package.startswith("streamwarden.")


@dataclass
class ModuleInfo:
    """What the Rego parser reads in a module: its package, and the heads of its rules."""

    package: str
    line: int
    rule_sets: list[str]
    tests: list[str]
    reads: timeread.Reads


def module_package(source: str, display: str) -> tuple[str, int]:
    """(package, line) of a Rego module as the parser reads it (see ``analyze_module``)."""
    info = analyze_module(source, display)
    return info.package, info.line


def _parse_module(source: str, display: str) -> tuple[str, str] | PolicyError:
    """(the package the engine declares, the syntax tree as JSON) from a throwaway regorus engine,
    or the error, as data: an exception raised while the engine is alive would hold it in its
    traceback (a kept error then keeps it, in a cycle the collector may free on another thread,
    which a regorus engine does not allow)."""
    from streamwarden.engine.rego import clean_error, new_engine

    engine = new_engine()
    try:
        declared = str(engine.add_policy(display, source))
    except RuntimeError as exc:
        message, _, line = clean_error(exc)
        return PolicyError(f"policy does not compile: {message}", file=display, line=line)
    try:
        return declared, str(engine.get_ast_as_json())
    except RuntimeError:
        return declared, ""  # analyze_module says it cannot read the parsed module


def analyze_module(source: str, display: str) -> ModuleInfo:
    """A custom module as the Rego parser reads it, whatever its indentation, comments or raw
    strings say: a throwaway regorus engine parses it. Its package (a dotted list of names), the
    deny/warn/info sets and test_* rules its rule heads define, and no call of a forbidden
    built-in (``FORBIDDEN_CALLS``, ``FORBIDDEN_NAMESPACES``). Each problem is a PolicyError with
    the file and line; a syntax tree this code cannot read is one too (never a rule left out)."""
    parsed = _parse_module(source, display)
    if isinstance(parsed, PolicyError):
        raise parsed
    declared, ast = parsed
    try:
        module = json.loads(ast)[0]["ast"]
        node = module["package"]
        line = int(node["span"]["line"])
        segments = timeread.ref_names(node["refr"])
        heads = [_rule_head(rule) for rule in module["rules"]]
        imports = [_import_name(imp, source) for imp in module.get("imports") or []]
        reads = timeread.analyze(module, source)
    except (RuntimeError, ValueError, LookupError, TypeError, AttributeError, StopIteration):
        raise PolicyError(
            "cannot read the parsed module (the regorus version is not the one this streamwarden pins?)",
            file=display,
            hint="reinstall streamwarden with its pinned dependencies",
        ) from None
    package = ".".join(segments or [])
    if not segments or not all(_NAME.match(s) for s in segments) or declared != f"data.{package}":
        shown = "".join(f".{s}" if _NAME.match(s) else f"[{json.dumps(s)}]" for s in segments or [])
        raise PolicyError(
            f"package {shown.lstrip('.') or declared}: a package path is dotted names",
            file=display,
            line=line,
            hint="name the package with letters, digits and _, e.g. `package acme.pipelines`",
        )
    names = [name for name, _ in heads]
    # a call whose first name is a rule of this module or an import alias is the module's own
    own = {n for n in names if n} | {n for n in imports if n}
    for name, at in _forbidden_calls(module["rules"], own):  # the first one
        raise PolicyError(
            f"`{name}` is not allowed in a policy: policies are deterministic and do no I/O",
            file=display,
            line=at,
            hint="take the time from input.now_ms (so a --now replay decides the same); the facts a "
            "policy needs come from streamwarden's gatherers in input.facts",
        )
    return ModuleInfo(
        package=package,
        line=line,
        rule_sets=sorted({n for n in names if n in RULE_SETS}),
        tests=list(dict.fromkeys(n for n in names if n and n.startswith("test_"))),
        reads=reads,
    )


_NO_READS = timeread.Reads(now=(), refs=())


def module_reads(source: str, display: str) -> timeread.Reads:
    """Where a module may read the time and which data paths it references (a built-in file the
    index does not know: parsed for that alone)."""
    parsed = _parse_module(source, display)
    if isinstance(parsed, PolicyError):
        raise parsed
    try:
        return timeread.analyze(json.loads(parsed[1])[0]["ast"], source)
    except (ValueError, LookupError, TypeError, AttributeError):
        raise PolicyError(
            "cannot read the parsed module (the regorus version is not the one this streamwarden pins?)",
            file=display,
            hint="reinstall streamwarden with its pinned dependencies",
        ) from None


def forbidden_calls(source: str, display: str) -> list[tuple[str, int]]:
    """(built-in, line) of every forbidden call in a module (for tests of the built-in pack)."""
    from streamwarden.engine.rego import new_engine

    engine = new_engine()
    engine.add_policy(display, source)
    module = json.loads(engine.get_ast_as_json())[0]["ast"]
    own = {n for n, _ in (_rule_head(r) for r in module["rules"]) if n}
    own |= {_import_name(imp, source) for imp in module.get("imports") or []}
    return list(_forbidden_calls(module["rules"], own))


def _is_forbidden(name: str) -> bool:
    return name in FORBIDDEN_CALLS or ("." in name and name.split(".", 1)[0] in FORBIDDEN_NAMESPACES)


def _forbidden_calls(node: Any, own: set[str]) -> Iterator[tuple[str, int]]:
    """Walk the syntax tree: every ``Call`` whose function is a forbidden built-in, and every
    ``with ... as`` that puts one in place of another function. The target of a ``with``
    (``with time.now_ns as 1``, a test's mock) calls nothing and is allowed."""
    if isinstance(node, list):
        for item in node:
            yield from _forbidden_calls(item, own)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "Call" and isinstance(value, dict):
            names = timeread.ref_names(value.get("fcn"))
            if names and names[0] not in own and _is_forbidden(".".join(names)):
                yield ".".join(names), int(value["span"]["line"])
        elif key == "with_mods" and isinstance(value, list):
            for mod in value:
                names = timeread.ref_names(mod.get("as")) if isinstance(mod, dict) else None
                if names and names[0] not in own and _is_forbidden(".".join(names)):
                    yield ".".join(names), int(mod["span"]["line"])
                yield from _forbidden_calls(mod.get("as") if isinstance(mod, dict) else None, own)
            continue
        yield from _forbidden_calls(value, own)


def _rule_head(rule: Any) -> tuple[str, int]:
    """(first name of the rule's head, line): ``deny`` for ``deny contains x if``, ``deny[x] if``,
    ``default deny := ...``, ``deny.a.b := ...``."""
    kind, body = next(iter(rule.items()))
    if kind == "Spec":
        _, head = next(iter(body["head"].items()))
        refr = head["refr"]
    elif kind == "Default":
        refr = body["refr"]
    else:
        raise LookupError(kind)
    while isinstance(refr, dict) and ("RefDot" in refr or "RefBrack" in refr):
        refr = next(iter(refr.values()))["refr"]
    return str(refr["Var"]["value"]), int(body["span"]["line"])


def _import_name(imp: dict[str, Any], source: str) -> str:
    """The name an import binds: its alias (``as x``; the tree has only its span) or last segment."""
    alias = imp.get("as")
    if isinstance(alias, dict) and alias.get("line"):
        text = source.splitlines()[int(alias["line"]) - 1][int(alias["col"]) - 1 :]
        m = _RULE_HEAD.match(text)
        return m.group(1) if m else ""
    names = timeread.ref_names(imp.get("refr"))
    return names[-1] if names else ""


def _rego_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.rego") if p.is_file())


def builtin_policy_files(tests: bool = True) -> list[PolicyFile]:
    """The built-in pack; without ``tests``, its rules only (a run evaluates no test file: the
    built-in tests are read by ``policy test``). A file whose text the pack's index knows is taken
    from it (:func:`builtin_index`); any other is parsed."""
    base = policies_dir()
    index = builtin_index(base)
    out = []
    for p in _rego_files(base):
        if not tests and p.name.endswith("_test.rego"):
            continue
        display = f"policies/{p.relative_to(base).as_posix()}"
        source = _policy_source(p, display)
        entry = index.get(display)
        known = _from_index(entry, source, p, display) if entry is not None else None
        out.append(known if known is not None else parse_policy(source, display, True, p))
    return out


# The built-in pack's index (INDEX_NAME beside its files, written by scripts/update_policy_index.py
# and kept current by tests/engine/test_policy_index.py): each file's parse (package, rule sets, tests,
# conditions, METADATA blocks) by the SHA-256 of its text. Parsing the METADATA YAML of every
# built-in file is 8 ms of each run; the index is read in one. An entry whose hash is not the
# file's (an edited checkout), or an index that cannot be read, only means the file is parsed.
INDEX_NAME = "index.json"
INDEX_FORMAT = "streamwarden-policy-index/2"  # 2: with now_reads and data_refs


@functools.lru_cache(maxsize=4)
def builtin_index(base: Path) -> dict[str, Any]:
    """The index's entries by display path (``policies/streamwarden/state/sw_state_003.rego``), or none."""
    try:
        doc = json.loads((base / INDEX_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) and doc.get("format") == INDEX_FORMAT else None
    return files if isinstance(files, dict) else {}


def index_entry(f: PolicyFile) -> dict[str, Any]:
    """What the index keeps of a parsed built-in file."""
    return {
        "sha256": hashlib.sha256(f.source.encode("utf-8")).hexdigest(),
        "package": f.package,
        "is_test": f.is_test,
        "rule_sets": f.rule_sets,
        "tests": f.tests,
        "requires": list(f.requires),
        "metadata": [{"meta": b.meta, "head": b.head, "line": b.line, "marks": b.marks} for b in f.metadata],
        "now_reads": [list(r) for r in f.now_reads],
        "data_refs": list(f.data_refs),
    }


def _from_index(entry: Any, source: str, path: Path, display: str) -> PolicyFile | None:
    try:
        if entry["sha256"] != hashlib.sha256(source.encode("utf-8")).hexdigest():
            return None
        return PolicyFile(
            path=path,
            display=display,
            source=source,
            package=str(entry["package"]),
            builtin=True,
            is_test=bool(entry["is_test"]),
            rule_sets=[str(r) for r in entry["rule_sets"]],
            tests=[str(t) for t in entry["tests"]],
            requires=tuple(str(c) for c in entry["requires"]),
            metadata=[
                MetadataBlock(dict(b["meta"]), str(b["head"]), int(b["line"]), dict(b["marks"]))
                for b in entry["metadata"]
            ],
            now_reads=tuple((int(a), int(b)) for a, b in entry["now_reads"]),
            data_refs=tuple(str(r) for r in entry["data_refs"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def load_policy_set(
    extra_dirs: list[Path] | None = None,
    *,
    builtin: bool = True,
    root: Path | None = None,
    files: list[PolicyFile] | None = None,
    builtin_tests: bool = True,
) -> PolicySet:
    """The built-in pack plus custom dirs, or exactly ``files`` (policies read from a trusted git ref).
    ``builtin_tests`` false: the built-in pack without its test files (a run's policy set; custom
    directories are read whole, so a broken custom file fails the run as before)."""
    if files is None:
        files = builtin_policy_files(tests=builtin_tests) if builtin else []
        for d in extra_dirs or []:
            if not d.is_dir():
                raise PolicyError("policy directory does not exist", file=shown_name(str(d)))
            for p in _rego_files(d):
                files.append(_read_policy(p, _shown(p, root), False))
    return catalog(files)


def catalog(files: list[PolicyFile]) -> PolicySet:
    rules: dict[str, RuleDescriptor] = {}
    known: set[str] = set()
    for f in files:
        if f.is_test:
            continue
        for block in f.metadata:
            meta, head, line = block.meta, block.head, block.line
            custom = meta.get("custom") or {}
            rid = custom.get("id") if isinstance(custom, dict) else None
            if not rid:
                if f.builtin and not _requires_only(meta):
                    raise PolicyError("METADATA without custom.id", file=f.display, line=line)
                continue
            rid = str(rid)
            if not f.builtin and rid.startswith(RESERVED_PREFIX):
                raise PolicyError(
                    f"rule id {rid} uses the reserved prefix {RESERVED_PREFIX}",
                    file=f.display,
                    line=line,
                    hint="give custom rules ids of your own, e.g. ACME-001",
                )
            severity = str(custom.get("severity") or SET_SEVERITY.get(head, "error")).lower()
            if severity not in SEVERITIES:
                raise PolicyError(f"unknown severity {severity!r} for {rid}", file=f.display, line=line)
            kind = custom.get("kind")
            if kind is not None and kind not in KINDS:
                raise PolicyError(
                    f"unknown custom.kind {kind!r} for {rid}",
                    file=f.display,
                    line=block.line_of("custom.kind"),
                    hint="the kind is `diff` for a rule that compares the base branch with the head; "
                    "leave it out for any other rule",
                )
            if rid in rules:
                raise PolicyError(
                    f"rule id {rid} has METADATA twice (first in {rules[rid].file}:{rules[rid].line})",
                    file=f.display,
                    line=line,
                )
            rules[rid] = RuleDescriptor(
                id=rid,
                title=str(meta.get("title") or rid),
                severity=severity,
                description=str(meta.get("description") or "").strip(),
                remediation=str(custom.get("remediation") or "").strip(),
                example=str(custom.get("example") or "").rstrip(),
                package=f.package,
                rule_set=head,
                file=f.display,
                line=line,
                builtin=f.builtin,
                kind=str(kind or ""),
            )
            known.add(rid)
        known.update(_RULE_ID_LITERAL.findall(f.source))
    return PolicySet(files=files, rules=rules, known_ids=known)


def _requires_only(meta: dict[str, Any]) -> bool:
    """A block that declares only the file's ``custom.requires`` (no rule of its own)."""
    custom = meta.get("custom")
    return set(meta) == {"custom"} and isinstance(custom, dict) and set(custom) == {"requires"}


def _shown(p: Path, root: Path | None) -> str:
    """A custom policy file's name as reports show it: relative to the repository, and valid
    Unicode (a name's bytes that are not UTF-8 shown as ``\\xNN``, as a contract's are; the engines,
    the JSON and SARIF reports refuse the lone surrogates such a name decodes to)."""
    if root is not None:
        try:
            return shown_name(p.resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            pass
    return shown_name(str(p))
