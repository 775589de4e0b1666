"""``streamwarden diff``: a contract review a person reads as a pull-request comment.

Every change between the base and head contract is listed with its class: ``breaking`` (an error
from a diff rule), ``coordinate`` (a warning from a diff rule, or a change no diff rule judges) or
``safe`` (a change known to be harmless: documentation, a column moved, an optional column or a
consumer added, a consumer's contact edited). The classification comes from the policies'
findings, so the review and ``check --base`` can never disagree about what a rule says; a change
no rule judges is reviewed, never called safe. Every change in meaning is listed, the harmless
ones too: a column moved is ``safe`` (a partition field moved: ``coordinate``), a column removed
from a table with consumers is at least ``coordinate`` under every compatibility mode, and a
contract whose file changed only in comments or formatting reads "no change in meaning". The
consumers of a change are the ones its finding names (``evidence.consumers``), else every
consumer for a change readers of the table can notice.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.core import exitcodes, secrets
from streamwarden.evaluate import writers
from streamwarden.evaluate.findings import Finding
from streamwarden.yamlsafe.read import join_index, join_key

# Lists whose items have an identity: paired by key, so a reorder is not a change.
_KEYED_LISTS = {
    "table.schema": ("id", "name"),
    "state.operators": ("uid",),
    "state.dropped": ("uid",),
    "metadata.consumers": ("name",),
    "job.sources": ("name",),
    "job.sinks": ("name",),
    "waivers": ("rule",),
    "backfills": ("job",),
    "table.partition_spec": ("source",),
}
# Keyed lists whose order means something: a column's position is what `SELECT *` and positional
# readers see, a partition field's position is part of the partition spec. A move is listed.
_ORDERED_LISTS = {"table.schema": "column", "table.partition_spec": "partition field"}
# Changes readers of the table can notice: their consumers are named.
_READER_PREFIXES = ("table.", "retention.", "quality.", "metadata.consumers", "schema_evolution.")
_DERIVED = {"expires_end_ms"}
CLASS_ORDER = {"breaking": 0, "coordinate": 1, "safe": 2}


@dataclass
class Change:
    path: str  # head path where it exists, else the base path
    anchor: str  # where a finding about it points (a removed item: its list)
    change: str  # added | removed | changed | moved | kept (a field a diff rule says should have changed)
    # | deployment (what a deployment file the contract names runs the job with, that a diff rule
    # judges: its value at the base is not read, so before is None)
    before: Any
    after: Any
    cls: str = "safe"
    rule: str | None = None
    reason: str = ""
    consumers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "change": self.change,
            "before": self.before,
            "after": self.after,
            "class": self.cls,
            "rule": self.rule,
            "reason": self.reason,
            "consumers": self.consumers,
        }


def changes_between(base: Any, head: Any, path: str = "") -> list[Change]:
    """Structural changes from base to head, with list items paired by identity where they have one."""
    if base == head:
        return []
    if isinstance(base, dict) and isinstance(head, dict):
        out: list[Change] = []
        for key in list(base) + [k for k in head if k not in base]:
            if key in _DERIVED:
                continue
            child = join_key(path, key)
            if key not in head:
                out.append(Change(child, child, "removed", base[key], None))
            elif key not in base:
                out.append(Change(child, child, "added", None, head[key]))
            else:
                out.extend(changes_between(base[key], head[key], child))
        return out
    if isinstance(base, list) and isinstance(head, list) and path in _KEYED_LISTS:
        return _keyed_list_changes(base, head, path, _KEYED_LISTS[path])
    return [Change(path, path, "changed", base, head)]


def _identity(item: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(item, dict):
        for k in keys:
            if item.get(k) is not None:
                return (k, item[k])
    return ("value", json.dumps(item, sort_keys=True))


def _keyed_list_changes(base: list[Any], head: list[Any], path: str, keys: tuple[str, ...]) -> list[Change]:
    out: list[Change] = []
    head_by_id: dict[Any, int] = {}
    for i, item in enumerate(head):
        head_by_id.setdefault(_identity(item, keys), i)
        if isinstance(item, dict) and item.get("renamed_from"):
            head_by_id.setdefault(("name", item["renamed_from"]), i)
    matched: set[int] = set()
    pairs: list[tuple[int, int]] = []  # (base index, head index) in base order
    for j, item in enumerate(base):
        found: int | None = head_by_id.get(_identity(item, keys))
        if found is None and isinstance(item, dict) and "name" in keys:
            found = head_by_id.get(("name", item.get("name")))
        if found is None:
            out.append(Change(join_index(path, j), path, "removed", item, None))
            continue
        matched.add(found)
        pairs.append((j, found))
        out.extend(changes_between(item, head[found], join_index(path, found)))
    for i, item in enumerate(head):
        if i not in matched:
            p = join_index(path, i)
            out.append(Change(p, p, "added", None, item))
    if path in _ORDERED_LISTS:
        out.extend(_moves(pairs, base, path))
    return out


def _moves(pairs: list[tuple[int, int]], base: list[Any], path: str) -> list[Change]:
    """The items that changed places: those outside the longest run kept in the same relative
    order, so an insertion or a removal (which shifts positions) is not a move, and a swap of
    two neighbours is one move, not two."""
    kept = _longest_increasing([h for _, h in pairs])
    out = []
    for n, (j, i) in enumerate(pairs):
        if n in kept:
            continue
        item = base[j]
        what = _ORDERED_LISTS[path]
        label = item.get("name" if what == "column" else "source") if isinstance(item, dict) else None
        named = f"{what} {json.dumps(label, ensure_ascii=False)}" if label is not None else what
        c = Change(join_index(path, i), join_index(path, i), "moved", j + 1, i + 1)
        c.reason = f"{named} moved from position {j + 1} to {i + 1}"
        out.append(c)
    return out


def _longest_increasing(values: list[int]) -> set[int]:
    """Indexes into ``values`` of one longest strictly increasing subsequence (patience sorting)."""
    tails: list[int] = []  # tails[k]: index of the smallest tail of an increasing run of length k+1
    previous: list[int] = [-1] * len(values)
    for n, v in enumerate(values):
        k = bisect.bisect_left(tails, v, key=values.__getitem__)
        if k > 0:
            previous[n] = tails[k - 1]
        if k == len(tails):
            tails.append(n)
        else:
            tails[k] = n
    out: set[int] = set()
    n = tails[-1] if tails else -1
    while n != -1:
        out.add(n)
        n = previous[n]
    return out


def _related(change: Change, finding: Finding) -> bool:
    """A finding is about a change when it points into the changed field, or, for a finding on a
    whole list (a removed field or operator), when it names the removed item."""
    fp = finding.path
    if not fp or change.change == "moved":
        return False  # no rule judges a position; a finding inside a moved item is about its other changes
    if change.change == "removed" and fp == change.anchor:
        if change.anchor != change.path:  # an item removed from a list: the finding names it
            keys = _KEYED_LISTS.get(change.anchor, ())
            before = change.before if isinstance(change.before, dict) else {}
            return any(before.get(k) is not None and before.get(k) == finding.value for k in keys)
        return True  # a key removed (a column's `required`): the finding points at it
    if fp in _KEYED_LISTS:
        return False  # a finding on a whole list is about a removed item (above), not this change
    for outer, inner in ((change.path, fp), (fp, change.path)):
        if outer == inner or inner.startswith(outer + ".") or inner.startswith(outer + "["):
            return True
    return False


def classify(changes: list[Change], findings: list[Finding], consumers: list[str], diff_rules: set[str]) -> None:
    """Each change gets the most severe related finding of a diff rule; a change no diff rule
    judges is ``coordinate`` (reviewed) unless it is known to be harmless (:func:`_harmless`)."""
    relevant = [f for f in findings if f.rule in diff_rules]
    for c in changes:
        related = sorted((f for f in relevant if _related(c, f)), key=lambda f: (f.severity != "error", f.rule))
        harmless = None if related else _harmless(c)
        if related and related[0].severity == "error" and not related[0].waived:
            c.cls, c.rule, c.reason = "breaking", related[0].rule, related[0].message
        elif related:
            c.cls, c.rule, c.reason = "coordinate", related[0].rule, related[0].message
        elif harmless is not None:
            c.cls, c.reason = "safe", harmless
        else:
            c.cls, c.reason = "coordinate", _review_reason(c, consumers)
        if c.cls != "safe":
            c.consumers = _consumers_of(c, related[0] if related else None, consumers)


def _consumers_of(c: Change, finding: Finding | None, consumers: list[str]) -> list[str]:
    """Whom to tell about a change: the consumers its finding names, else every consumer when
    readers of the table can notice it."""
    named = finding.evidence.get("consumers") if finding is not None else None
    if isinstance(named, list) and all(isinstance(n, str) for n in named):
        return list(named)
    return list(consumers) if c.path.startswith(_READER_PREFIXES) else []


def _harmless(c: Change) -> str | None:
    """Why a change no rule judges is known to be harmless, or None: documentation, a column
    moved, an optional column added, a consumer added or their contact edited. Anything else is
    reviewed: a change no rule knows is never called safe."""
    if c.change == "moved" and c.anchor.startswith("table.schema["):
        return c.reason + ": readers that select by name are unaffected"
    if c.path.endswith((".doc", ".description")) or c.path == "metadata.description":
        return "documentation only"
    optional = isinstance(c.after, dict) and c.after.get("required") is not True
    if c.change == "added" and optional and re.fullmatch(r"table\.schema\[\d+\]", c.path):
        return "an optional field added: readers that do not know it ignore it"
    if c.change == "added" and re.fullmatch(r"metadata\.consumers\[\d+\]", c.path):
        return "a consumer added: they are told about breaking changes from now on"
    if re.fullmatch(r"metadata\.consumers\[\d+\]\.contact", c.path):
        return "a consumer's contact edited: informs who is told about breaking changes"
    return None


def _review_reason(c: Change, consumers: list[str]) -> str:
    """Why a change no rule judges needs a reviewer: what it touches, where that is known."""
    if c.change == "removed" and c.anchor == "table.schema" and consumers:
        # no compatibility mode makes dropping a column harmless to the consumers that read it
        return _column_removed_reason(c)
    if c.change == "moved":
        return c.reason + ": a new partition spec; consumers' partition filters and maintenance jobs may need updating"
    if c.path.startswith("state.") or c.path.startswith("job.max_parallelism"):
        return "changes the job's state: deploy from a savepoint and verify the restore (streamwarden gate)"
    if c.path.startswith("table.partition_spec"):
        return "partition evolution: consumers' partition filters and maintenance jobs may need updating"
    if c.path.startswith("schema_evolution."):
        return "the compatibility promise changes from the next pull request on"
    if c.path.startswith("table.identifier_fields"):
        return "consumers relying on the table's keys must be told"
    return "no rule judges this change, so it is not known to be safe: review what it means for the job and its readers"


def _column_removed_reason(c: Change) -> str:
    name = c.before.get("name") if isinstance(c.before, dict) else None
    column = f"column {json.dumps(name, ensure_ascii=False)}" if name is not None else "a column"
    return f"{column} removed: consumers that read it break; tell them before merging"


def diff_rules(result: Any) -> set[str]:
    """The rules that compare the head with the base, whose findings classify the changes: the
    policies say which (METADATA ``custom.kind: diff``), read into the run's policy set."""
    policy_set = getattr(result, "policy_set", None)
    return policy_set.diff_rule_ids() if policy_set is not None else set()


def _across_contracts(result: Any) -> set[str]:
    """The diff rules judged once per run across the repository's contracts (package
    streamwarden.writers), not per contract."""
    policy_set = getattr(result, "policy_set", None)
    if policy_set is None:
        return set()
    return {r.id for r in policy_set.rules.values() if r.kind == "diff" and r.package == writers.PACKAGE}


def review(result: Any) -> list[dict[str, Any]]:
    """Per pipeline: its status and classified changes, from a run with ``base_ref`` and kept inputs."""
    diff_ids = diff_rules(result)
    rules = {f.rule for f in result.findings if f.rule in diff_ids}
    by_pipeline: dict[str, list[Finding]] = {}
    for f in result.findings:
        by_pipeline.setdefault(f.pipeline, []).append(f)
    out: list[dict[str, Any]] = []
    unchanged: list[tuple[int, Any]] = []  # (position in out, ref): same meaning; did the file change?
    cached: frozenset[str] = getattr(result, "cached", frozenset())
    across = _across_contracts(result)
    for ref in result.pipelines:
        findings = by_pipeline.get(ref.name, [])
        if across and result.base is not None and result.base.unchanged(_head_path(result.base.root, ref.file)):
            # a file the pull request leaves as it is lists no change, whether the cache answered it
            # or not: a rule judged across the contracts (one writer per table) found there what the
            # base already held (the check still reports it; the review lists what the PR changes)
            findings = [f for f in findings if f.rule not in across]
        if ref.name not in result.inputs and ref.name in cached:
            # answered by the result cache, which answers, in a pull request, only a file the pull
            # request leaves as it is (the base's bytes) whose findings hold nothing for the review
            # (check/runcache.py, _reviewable): no change to list, as for the same file evaluated
            if result.base is not None:
                unchanged.append((len(out), ref))
            continue
        doc = result.inputs.get(ref.name) or {}
        base = doc.get("base") or {}
        if base.get("status") == "added":
            consumers = _consumer_names(doc.get("contract") or {})
            # nothing to compare, but a diff rule may judge the addition itself (a second writer
            # of a table: SW-TABLE-014): its findings are listed as what the contract adds
            out.append(
                {
                    "pipeline": ref.name,
                    "status": "added",
                    "file": ref.file,
                    "changes": [c.to_dict() for c in _added(findings, consumers, diff_ids)],
                    "note": "A new contract: checked as new, nothing to compare.",
                }
            )
            continue
        if base.get("status") == "unparseable":
            out.append(
                {
                    "pipeline": ref.name,
                    "status": "changed",
                    "file": ref.file,
                    "changes": [],
                    "note": f"The base version could not be read ({base.get('error')}); "
                    "the head was checked on its own.",
                }
            )
            continue
        changes = _changes(doc, findings, rules, diff_ids)
        if changes:
            out.append(
                {"pipeline": ref.name, "status": "changed", "file": ref.file, "changes": [c.to_dict() for c in changes]}
            )
        elif result.base is not None:
            unchanged.append((len(out), ref))
    for at, entry in reversed(_reworded(result.base, unchanged)):
        out.insert(at, entry)
    if result.base is not None:
        for removed in result.base.removed(set(result.names)):
            name = removed.name or removed.file
            findings = [f for f in by_pipeline.get(name, []) if f.rule in diff_ids]
            old = removed.contract or {}
            consumers = _consumer_names(old)
            change = Change("(contract)", "(contract)", "removed", removed.file, None)
            if findings:
                change.cls, change.rule, change.reason = "breaking", findings[0].rule, findings[0].message
                change.consumers = consumers
            else:
                change.cls, change.reason = "safe", "no declared consumers read this table"
            out.append({"pipeline": name, "status": "removed", "file": removed.file, "changes": [change.to_dict()]})
    scrubbed: list[dict[str, Any]] = secrets.scrub_tree(out)  # before/after are the contracts' values
    return scrubbed


def review_changes(doc: dict[str, Any], findings: list[Finding], diff_ids: set[str]) -> list[dict[str, Any]]:
    """What the review lists for one pipeline with a base (``doc``: its contract and base): each
    change between the two, classified by ``findings``, and the findings of a diff rule about a
    field the pull request did not change. (Self-check mode asks it of each cache hit: nothing.)"""
    return [c.to_dict() for c in _changes(doc, findings, diff_ids, diff_ids)]


def _changes(doc: dict[str, Any], findings: list[Finding], rules: set[str], diff_ids: set[str]) -> list[Change]:
    base = doc.get("base") or {}
    head = doc.get("contract") or {}
    consumers = _consumer_names(head)
    changes = changes_between(base.get("contract"), head)
    classify(changes, findings, consumers, rules)
    return changes + _unmatched(changes, findings, consumers, diff_ids)


def _reworded(base: Any, unchanged: list[tuple[int, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The contracts whose meaning is the same as at the base but whose file's text is not
    (comments, formatting, quoting): listed with "no change in meaning", never left out. One
    ``git cat-file`` for all of them."""
    if not unchanged:
        return []
    found = {ref.name: base.by_name.get(ref.name) for _, ref in unchanged}
    specs = {name: f"{base.commit}:{b.repo_path}" for name, b in found.items() if b is not None}
    blobs = base.repo.read_blobs(list(specs.values()))
    out = []
    for at, ref in unchanged:
        old = found.get(ref.name)
        head = _head_bytes(base.root, ref.file)
        if old is None or head is None:
            continue
        if blobs.get(specs[ref.name]) == head:
            continue  # the same bytes (a file only renamed included): nothing to review
        note = "No change in meaning: the file changed only in comments or formatting."
        if old.file != ref.file:
            note = f"No change in meaning: the file moved from {old.file} and changed only in comments or formatting."
        out.append((at, {"pipeline": ref.name, "status": "changed", "file": ref.file, "changes": [], "note": note}))
    return out


def _head_path(root: Path, shown: str) -> Path:
    """The head contract's file (``shown`` is root-relative where possible)."""
    path = Path(shown)
    return path if path.is_absolute() or not (root / path).exists() else root / path


def _head_bytes(root: Path, shown: str) -> bytes | None:
    """The head contract's file as it is now (``shown`` is root-relative where possible)."""
    path = Path(shown)
    for candidate in [path] if path.is_absolute() else [root / path, path]:
        try:
            return candidate.read_bytes()
        except OSError:
            continue
    return None


def _unmatched(
    changes: list[Change], findings: list[Finding], consumers: list[str], diff_ids: set[str]
) -> list[Change]:
    """A diff finding about a field the pull request did NOT change (a schema_version that should
    have been bumped), or about a deployment file (an upgrade mode that throws the state away):
    listed as a change of its own, so the review shows what to do."""
    out = []
    for f in findings:
        if f.rule not in diff_ids or f.waived or any(_related(c, f) for c in changes):
            continue
        if f.source == "deployment":
            c = Change(f.path, f.path, "deployment", None, f.value)
        else:
            c = Change(f.path, f.path, "kept", f.value, f.value)
        c.cls = "breaking" if f.severity == "error" else "coordinate"
        c.rule, c.reason = f.rule, f.message
        c.consumers = _consumers_of(c, f, consumers)
        out.append(c)
    return out


def _added(findings: list[Finding], consumers: list[str], diff_ids: set[str]) -> list[Change]:
    """The diff rules' findings on a contract the pull request adds, each as the addition it judges."""
    out = []
    for f in findings:
        if f.rule not in diff_ids or f.waived:
            continue
        c = Change(f.path, f.path, "added", None, f.value)
        c.cls = "breaking" if f.severity == "error" else "coordinate"
        c.rule, c.reason = f.rule, f.message
        c.consumers = _consumers_of(c, f, consumers)
        out.append(c)
    return out


def _consumer_names(contract: dict[str, Any]) -> list[str]:
    consumers = (contract.get("metadata") or {}).get("consumers") or []
    return [str(c["name"]) for c in consumers if isinstance(c, dict) and c.get("name") is not None]


def has_breaking(pipelines: list[dict[str, Any]]) -> bool:
    return any(c["class"] == "breaking" for p in pipelines for c in p["changes"])


def exit_code(result: Any, pipelines: list[dict[str, Any]]) -> int:
    """``diff``'s exit code: 2 when a contract could not be used (``result.errors``), 1 when the
    review (``pipelines``, from :func:`review`) holds a breaking change, else 0."""
    return exitcodes.exit_code(unusable=bool(result.errors), failed=has_breaking(pipelines))
