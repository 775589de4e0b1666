"""The base side of a pull-request check: contracts at the merge base, their first-parent history,
and the trusted policies (and configuration) read from the trusted ref.

Contracts pair by ``metadata.name``, so a renamed file still pairs; an unparseable base contract
pairs by path and is reported as such while the head is still checked.

Why one module of this size: the base side of a pull request is one snapshot (pairing by name, the
base's history, the trusted ref's policies and configuration, the base's deployment files), read
through one set of git processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.contracts.config import CONFIG_NAMES, Config, config_from_text
from streamwarden.contracts.load import contract_from_document, meant_as_contract_text
from streamwarden.contracts.normalize import UnitError, lower_enums, normalize_contract
from streamwarden.contracts.schemawalk import walker_for
from streamwarden.core.errors import ContractErrors, StreamwardenError
from streamwarden.core.paths import display_path, display_path_str, inside, relative_posix, resolved, through_link
from streamwarden.core.resources import CONTRACT_SCHEMA, load_schema, policies_dir
from streamwarden.core.runstate import current
from streamwarden.engine.policyset import PolicyFile, builtin_policy_files, parse_policy
from streamwarden.iceberg.access import Reader
from streamwarden.repo.git import GitRepo, Pending, blob_id, blob_ids_result, follow, grep_result, literal_prefix
from streamwarden.yamlsafe.read import MAX_BYTES, READ_FLAGS, decode_utf8, parse_documents, read_to_end

# the base's contracts are the files that name their kind, however the YAML writes it (quoted,
# flow style, after a byte-order mark): git grep lists them, and the file's text decides as
# discovery decides on the head (contracts.load.meant_as_contract_text)
_KIND_PATTERN = "PipelineContract"
TRANSITIVE_SUFFIX = "_transitive"
MAX_HISTORY = 1000
_HISTORY_TABLE_KEYS = ("identifier", "schema", "format_version", "partition_spec")


@dataclass
class BaseContract:
    file: str  # as shown (root-relative)
    repo_path: str
    contract: dict[str, Any] | None
    error: str | None = None
    name: str | None = None
    unchanged: bool = False  # same bytes at the same path in the work tree: not parsed on the base side


@dataclass
class BaseSnapshot:
    ref: str
    commit: str  # the merge base of ref and HEAD
    repo: GitRepo
    root: Path
    by_name: dict[str, BaseContract] = field(default_factory=dict)
    by_path: dict[str, BaseContract] = field(default_factory=dict)
    # earlier versions of the base contracts in a transitive mode (prepare_history): one git log
    # for all of them, their blobs from one cat-file
    pathspecs: list[str] = field(default_factory=list)
    _log: list[tuple[str, list[tuple[str, str, str]]]] | None = None
    _blobs: dict[str, bytes | None] = field(default_factory=dict)
    _same: frozenset[str] | None = None  # the unchanged files, as resolved absolute paths
    # the waivers in force, by pipeline name, where the trusted ref's contract differs from the
    # merge base's (read_trusted_waivers): the trusted ref may have revoked a waiver since
    trusted_waivers: dict[str, list[Any]] = field(default_factory=dict)

    def waivers_in_force(self, name: str, merge_base: list[Any]) -> list[Any]:
        """The waivers that count for pipeline ``name`` in this pull request: the trusted ref's
        contract's, which are the merge base's (``merge_base``) unless the trusted ref changed the
        contract since."""
        return self.trusted_waivers.get(name, merge_base)

    def read_trusted_waivers(self, trusted_commit: str, pathspecs: list[str]) -> None:
        """Where the trusted ref moved on since the merge base (a pull request not rebased, or
        ``--trusted-ref`` elsewhere), the contracts it changed since are read at the trusted ref
        for their waivers: one ``git diff`` (mostly empty) and one ``cat-file`` for what it lists.
        A contract the trusted ref deleted, renamed or cannot parse has no waiver in force."""
        if trusted_commit == self.commit:
            return
        changed = [
            f for f in self.repo.changed_files(self.commit, trusted_commit, pathspecs) if f.endswith((".yaml", ".yml"))
        ]
        if not changed:
            return
        blobs = self.repo.read_blobs([f"{c}:{f}" for f in changed for c in (self.commit, trusted_commit)])
        for f in changed:
            old, new = blobs.get(f"{self.commit}:{f}"), blobs.get(f"{trusted_commit}:{f}")
            for blob, trusted in ((new, True), (old, False)):
                if blob is None or b"PipelineContract" not in blob:
                    continue
                shown = display_path(self.repo.top / f, self.root)
                parsed = _parse_contract(blob, shown, self.repo.top / f)
                if parsed.name is None:
                    continue
                if trusted and parsed.contract is not None:
                    self.trusted_waivers[parsed.name] = list(parsed.contract.get("waivers") or [])
                else:
                    self.trusted_waivers.setdefault(parsed.name, [])  # gone, renamed or broken there

    def unchanged(self, head_file: Path) -> bool:
        """The head file holds the same bytes as the base at the same path (its meaning is the base's).
        (Asked for every contract of a pull request: a set of the unchanged files' resolved paths,
        made once, answers it; each one is the resolved top joined with the file's path in the
        repository, the inverse of ``GitRepo.relpath``.)"""
        same = self._same
        if same is None:
            top = os.fspath(self.repo.top_resolved())
            same = self._same = frozenset(
                os.path.join(top, *rel.split("/")) for rel, found in self.by_path.items() if found.unchanged
            )
        return os.fspath(resolved(head_file)) in same

    def document(self, name: str, head_file: Path, head: dict[str, Any] | None = None) -> dict[str, Any]:
        """``input.base`` for the head contract ``name`` (see docs/input-document.md). An unchanged
        file's base version is the head contract itself (``head``), with no history to compare."""
        same_path, found = self._paired(name, head_file)
        if same_path is not None and same_path.unchanged and head is not None:
            return {
                "ref": self.ref,
                "commit": self.commit,
                "file": same_path.file,
                "status": "present",
                "error": None,
                "contract": head,
                "history": [],
            }
        if found is None:
            return {
                "ref": self.ref,
                "commit": self.commit,
                "file": None,
                "status": "added",
                "error": None,
                "contract": None,
                "history": [],
            }
        if found.contract is None:
            return {
                "ref": self.ref,
                "commit": self.commit,
                "file": found.file,
                "status": "unparseable",
                "error": found.error,
                "contract": None,
                "history": [],
            }
        return {
            "ref": self.ref,
            "commit": self.commit,
            "file": found.file,
            "status": "present",
            "error": None,
            "contract": found.contract,
            "history": self.history(found),
        }

    def _paired(self, name: str, head_file: Path) -> tuple[BaseContract | None, BaseContract | None]:
        """The base file at the head file's path, and the base contract the head contract ``name``
        pairs with: the one of the same name, else (unparseable, or renamed in place: a new
        metadata.name does not make the changes beside it new) the one the base held in the same
        file."""
        same_path = self.by_path.get(_relpath(self.repo, head_file) or "")
        found = self.by_name.get(name)
        if found is None and same_path is not None and not same_path.unchanged:
            found = same_path
        return same_path, found

    def named_deployment(self, name: str, head_file: Path, head: dict[str, Any]) -> list[str]:
        """The files the base's contract of pipeline ``name`` names in ``job.deployment`` (those that
        still exist, in the base's order), when one of them is a file the head's contract (``head``,
        at ``head_file``) no longer names; else none. In a pull request they are the job's
        configuration as far as the trusted side knows, so they are still read and judged, together
        and in the base's order as the base read them (SW-DEPLOY-006 reports that the pointer
        moved). Repository-relative paths, each joined to the base contract's directory as text: a
        symbolic link the pull request puts in the contract's place or directory does not move them."""
        _, found = self._paired(name, head_file)
        if found is None or found.contract is None:
            return []  # added, unparseable at the base, or the same file at the same place
        old = _deployment_entries(found.contract)
        if not old:
            return []
        top = self.repo.top_resolved()
        out: list[str] = []
        dropped = False
        try:
            head_dir = resolved(head_file).parent
            named = {resolved(head_dir / e) for e in _deployment_entries(head)}
            for entry in old:
                rel = posixpath.normpath(posixpath.join(posixpath.dirname(found.repo_path), entry))
                target = resolved(top / rel)
                if target.exists() and rel not in out:  # a file the pull request deletes deploys nothing
                    out.append(rel)
                    dropped = dropped or target not in named
        except (OSError, ValueError):  # a name the system refuses: the head side reports its entries
            return []
        return out if dropped else []

    def reader(self, name: str, head_file: Path, head: dict[str, Any] | None = None) -> Reader:
        """Who reads the live table for the head contract ``name`` in this pull request
        (streamwarden.iceberg.access): the owner of its version on the base, and the table that
        version reads; neither for a contract new in the pull request (or unparseable on the base).
        A pull request cannot grant its contract more by editing ``metadata.owner``."""
        base = self.document_contract(name, head_file, head)
        if base is None:
            return Reader(pull_request=True, pipeline=name)
        meta: dict[str, Any] = base["metadata"] if isinstance(base.get("metadata"), dict) else {}
        table: dict[str, Any] = base["table"] if isinstance(base.get("table"), dict) else {}
        owner = meta.get("owner") if isinstance(meta.get("owner"), str) else None
        catalog, identifier = table.get("catalog"), table.get("identifier")
        base_table = (str(catalog), str(identifier)) if catalog and identifier else None
        return Reader(owner=owner, pull_request=True, base_table=base_table, pipeline=name)

    def document_contract(
        self, name: str, head_file: Path, head: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """The base version of the head contract ``name`` (as :meth:`document` pairs them), without
        its history; None when the pull request adds it or the base's cannot be parsed."""
        same_path, found = self._paired(name, head_file)
        if same_path is not None and same_path.unchanged and head is not None:
            return head
        return None if found is None else found.contract

    def history(self, base: BaseContract) -> list[dict[str, Any]]:
        """Earlier versions along the first-parent history, newest first, for transitive modes only.

        Each version keeps only the schema fields whose state (name, id, type, required, ...) no
        newer version had: the rules compare field by field, so this is the same verdict at a cost
        that follows the distinct field states, not versions x fields.
        """
        if not _transitive(base.contract):
            return []
        commits, specs = self._versions(base)
        missing = [spec for spec in [*specs, f"{self.commit}:{base.repo_path}"] if spec not in self._blobs]
        if missing:  # not prepared (prepare_history reads every transitive contract's at once)
            self._blobs.update(self.repo.read_blobs(missing))
        blobs = self._blobs
        base_blob = blobs.get(f"{self.commit}:{base.repo_path}")
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for (commit, path), spec in zip(commits, specs, strict=True):
            blob = blobs.get(spec)
            if blob is None or blob == base_blob:
                continue
            contract = _history_version(blob, f"{path}@{commit[:12]}")
            if contract is None:
                continue
            # The transitive rules judge each field on its own (was it required, which types did it
            # have): keep, per version, only the field states not already seen in a newer one.
            table = contract.get("table") or {}
            fresh = []
            for fld in table.get("schema") or []:
                key = json.dumps([table.get("identifier"), fld], sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    fresh.append(fld)
            if fresh:
                out.append({"commit": commit, "contract": {**contract, "table": {**table, "schema": fresh}}})
        return out

    def _versions(self, base: BaseContract) -> tuple[list[tuple[str, str]], list[str]]:
        if self._log is None:
            self._log = self.repo.first_parent_log(self.commit, self.pathspecs)
        commits = follow(self._log, base.repo_path, MAX_HISTORY)
        return commits, [f"{c}:{p}" for c, p in commits]

    def prepare_history(self) -> None:
        """Read the earlier versions of every base contract in a transitive mode now: one
        ``git log`` over the contract folders, one ``git cat-file --batch`` for all their blobs
        (before workers fork, so that they inherit them)."""
        wanted = [b for b in self.by_path.values() if _transitive(b.contract)]
        if not wanted:
            return
        specs: list[str] = []
        for b in wanted:
            specs += [*self._versions(b)[1], f"{self.commit}:{b.repo_path}"]
        self._blobs.update(self.repo.read_blobs(list(dict.fromkeys(specs))))

    def removed(self, head_names: set[str]) -> list[BaseContract]:
        return [b for name, b in sorted(self.by_name.items()) if name not in head_names and b.contract is not None]


def _deployment_entries(contract: dict[str, Any]) -> list[str]:
    """``job.deployment``'s entries that are paths (the loader makes a single string a list)."""
    job = contract.get("job")
    entries = job.get("deployment") if isinstance(job, dict) else None
    if isinstance(entries, str):
        entries = [entries]
    return [e for e in entries if isinstance(e, str) and e.strip()] if isinstance(entries, list) else []


def _transitive(contract: dict[str, Any] | None) -> bool:
    mode = str(((contract or {}).get("schema_evolution") or {}).get("compatibility") or "")
    return mode.endswith(TRANSITIVE_SUFFIX)


def _history_version(blob: bytes, shown: str) -> dict[str, Any] | None:
    """An earlier version, for the compatibility rules only: parsed and normalized without a full
    schema validation (it was validated when it was the head); one that cannot be read is skipped."""
    try:
        docs = [d for d in parse_documents(decode_utf8(blob, shown), shown) if d.data is not None]
        if len(docs) != 1 or not isinstance(docs[0].data, dict):
            return None
        data = docs[0].data
        table: dict[str, Any] = data["table"] if isinstance(data.get("table"), dict) else {}
        trimmed = {  # what the compatibility rules read of an earlier version
            "table": {k: table[k] for k in _HISTORY_TABLE_KEYS if k in table},
            "schema_evolution": data.get("schema_evolution") or {},
        }
        schema = load_schema(CONTRACT_SCHEMA)
        return normalize_contract(lower_enums(walker_for(schema), schema, trimmed), schema)
    except (StreamwardenError, UnitError, ValueError, TypeError, AttributeError):
        return None


def _parse_contract(blob: bytes, shown: str, path: Path) -> BaseContract:
    repo_path = shown.split("@", 1)[0]
    name: str | None = None
    try:
        text = decode_utf8(blob, shown)
        docs = [d for d in parse_documents(text, shown) if d.data is not None]
        if len(docs) != 1:
            return BaseContract(shown, repo_path, None, "not exactly one YAML document")
        meta = docs[0].data.get("metadata") if isinstance(docs[0].data, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            name = meta["name"]
        c = contract_from_document(docs[0], path)
        return BaseContract(shown, repo_path, c.data, None, c.name)
    except ContractErrors as exc:
        return BaseContract(shown, repo_path, None, exc.errors[0].render(), name)
    except StreamwardenError as exc:
        return BaseContract(shown, repo_path, None, exc.render(), name)


def load_base(
    repo: GitRepo,
    ref: str,
    config: Config,
    paths: list[str],
    globs: list[str] | None = None,
    reuse_unchanged: bool = False,
) -> BaseSnapshot:
    """The contracts at the merge base, under ``paths`` or the contract globs (default: the config's).

    ``reuse_unchanged``: a base file with the same bytes as the work tree at the same path is not
    parsed; its base version is the head contract, with no history (see ``document``)."""
    pending = begin_base(repo, ref, config, paths, globs, reuse_unchanged)
    try:
        return pending.finish()
    finally:
        pending.close()


def begin_base(
    repo: GitRepo,
    ref: str,
    config: Config,
    paths: list[str],
    globs: list[str] | None = None,
    reuse_unchanged: bool = False,
) -> PendingBase:
    """:func:`load_base` in two steps: the merge base now, and the git processes that list the base
    contracts (a grep over every file at the merge base; with ``reuse_unchanged`` the tree's blob
    ids) started in the background, so that the caller's own work (discovering the head's
    contracts) runs meanwhile. :meth:`PendingBase.finish` completes it; ``close`` stops what was
    not collected (call it in a ``finally``)."""
    commit = repo.merge_base(ref)
    pathspecs = _pathspecs(repo, config, paths, config.contracts if globs is None else globs)
    return PendingBase(repo, ref, config, commit, pathspecs, reuse_unchanged)


class PendingBase:
    """A base snapshot whose git listings are still running (see :func:`begin_base`)."""

    def __init__(
        self, repo: GitRepo, ref: str, config: Config, commit: str, pathspecs: list[str], reuse_unchanged: bool
    ) -> None:
        self.repo, self.ref, self.config, self.commit = repo, ref, config, commit
        self.pathspecs, self.reuse_unchanged = pathspecs, reuse_unchanged
        self._grep: Pending | None = repo.start_grep_files(commit, _KIND_PATTERN, pathspecs)
        self._ids: Pending | None = None
        try:
            if reuse_unchanged:
                self._ids = repo.start_blob_ids(commit, pathspecs)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for pending in (self._grep, self._ids):
            if pending is not None:
                pending.close()
        self._grep = self._ids = None

    def finish(self) -> BaseSnapshot:
        repo, config, commit, pathspecs = self.repo, self.config, self.commit, self.pathspecs
        if self._grep is None:
            raise RuntimeError("the base snapshot was already finished or closed")
        snapshot = BaseSnapshot(ref=self.ref, commit=commit, repo=repo, root=config.root)
        files = grep_result(self._grep.result(), commit)
        files = [f for f in files if f.endswith((".yaml", ".yml"))]
        if self._ids is not None:
            # a file the work tree holds with the same bytes is told by its object id (computed from
            # the work tree's bytes): only the others' contents are read from git
            ids = blob_ids_result(self._ids.result())
            changed = []
            top = os.fspath(repo.top)
            real_top = os.fspath(repo.top_resolved())
            read: dict[str, bytes] = {}
            for f in files:
                oid = ids.get(f)
                if oid is None:
                    continue
                work = os.path.join(top, f)
                data = _work_tree_bytes(work)
                if data is not None and blob_id(data, oid) == oid and _at_its_path(work, real_top, f):
                    # what the work tree holds at the same path: its meaning is the head's, not parsed
                    # twice; its bytes are the head's text (readahead: the check reads it once)
                    snapshot.by_path[f] = BaseContract(display_path_str(work, config.root), f, None, unchanged=True)
                    if len(data) <= MAX_BYTES:
                        read[work] = data
                else:
                    changed.append(f)
            current().keep(read)
            files = changed
        self.close()
        blobs = repo.read_blobs([f"{commit}:{f}" for f in files])
        for f in files:
            blob = blobs.get(f"{commit}:{f}")
            if blob is None:
                continue
            shown = display_path(repo.top / f, config.root)
            try:
                text: str | None = blob.decode("utf-8")
            except UnicodeDecodeError:
                text = None  # (the parse reports it)
            if text is not None and not meant_as_contract_text(f, text):
                continue  # it mentions the kind, but no contract: discovery would not load it either
            parsed = _parse_contract(blob, shown, repo.top / f)
            parsed.repo_path = f
            snapshot.by_path[f] = parsed
            if parsed.name and parsed.name not in snapshot.by_name:
                snapshot.by_name[parsed.name] = parsed
        # history: the contract folders (each pathspec's literal directory), so that a rename inside
        # them is seen from both of its sides
        snapshot.pathspecs = sorted({literal_prefix(p) for p in pathspecs} or {""})
        if "" in snapshot.pathspecs:
            snapshot.pathspecs = []
        snapshot.prepare_history()
        return snapshot


def _at_its_path(work: str, real_top: str, rel: str) -> bool:
    """The work tree's file ``rel`` is reached without a symbolic link (neither the file nor a
    directory above it is one): only then are the same bytes the same contract, since the paths
    it names (``job.deployment``) are relative to where it really is."""
    return os.fspath(resolved(Path(work))) == os.path.join(real_top, *rel.split("/"))


def _work_tree_bytes(path: str) -> bytes | None:
    """The bytes of the work tree's regular file at ``path`` (None: no such file). ``os.read``
    calls on the descriptor, no file object: a pull request's check reads every unchanged contract."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        return read_to_end(fd, st.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _pathspecs(repo: GitRepo, config: Config, paths: list[str], globs: list[str]) -> list[str]:
    if paths:
        out = []
        for p in paths:
            try:
                out.append(repo.relpath(Path(p)) or ".")
            except ValueError:
                continue
        return out or ["."]
    prefix = ""
    with contextlib.suppress(ValueError):
        prefix = repo.relpath(config.root)
    prefix = "" if prefix in ("", ".") else prefix + "/"
    return [f":(glob){prefix}{g}" for g in globs]


@dataclass
class TrustedPolicies:
    ref: str
    commit: str
    files: list[PolicyFile]
    config: Config  # the trusted ref's streamwarden.yaml, or the defaults when it has none
    changes: list[dict[str, Any]]


def load_trusted(repo: GitRepo, trusted_ref: str, config: Config, policy_dirs: list[Path]) -> TrustedPolicies:
    """Policies, the configuration (policy dirs, contract globs, fail_on, environments) as committed
    on the trusted ref, and what the pull request changes in them (reported as SW-POLICY-001).

    The trusted configuration is looked up on the trusted ref itself, whatever the work tree holds:
    a pull request that deletes or renames ``streamwarden.yaml`` still gets the trusted one, one
    that adds it where the trusted ref has none gets the defaults (``fail_on: error``, the default
    contract glob, no environment), and a work-tree file or policy directory that is a symbolic link
    is looked up at its own path, never at the link's target (which the pull request chose)."""
    commit = repo.resolve(trusted_ref)
    changes: list[dict[str, Any]] = []
    trusted_config: Config | None = None
    trusted_rel: str | None = None
    head_rel = _literal_relpath(repo, config.path)
    candidates = _config_candidates(repo, config)
    blobs = repo.read_blobs([f"{commit}:{rel}" for rel in candidates])
    for rel in candidates:
        blob = blobs[f"{commit}:{rel}"]
        if blob is None:
            continue
        trusted_rel = rel
        shown = f"{display_path(repo.top / rel, config.root)}@{trusted_ref}"
        trusted_config = config_from_text(decode_utf8(blob, shown), shown, config.root)
        trusted_config.path = repo.top / rel
        if head_rel != rel:
            # the pull request removed or renamed it (a rename also adds the head file, below)
            changes.append(
                {"file": display_path(repo.top / rel, config.root), "change": "removed", "kind": "configuration"}
            )
        elif config.path is not None and (config.path.is_symlink() or config.path.read_bytes() != blob):
            changes.append({"file": _shown_literal(config.path, config), "change": "modified", "kind": "configuration"})
        break
    if config.path is not None and head_rel != trusted_rel:
        changes.append({"file": _shown_literal(config.path, config), "change": "added", "kind": "configuration"})
    if trusted_config is None:
        trusted_config = Config(root=config.root)  # the defaults: never the pull request's own file
    dirs: list[Path] = [*trusted_config.policies, *policy_dirs]
    builtin_dir = policies_dir()
    in_repo_builtin = inside(builtin_dir, repo.top)
    if in_repo_builtin:
        dirs.insert(0, builtin_dir)
    # the built-in pack without its tests, as a run loads it (they evaluate nothing; a change to
    # one changes no result)
    files: list[PolicyFile] = [] if in_repo_builtin else builtin_policy_files(tests=False)
    for d in dirs:
        builtin = d == builtin_dir
        dir_rel = _literal_relpath(repo, d) if not builtin else _relpath(repo, d)
        if dir_rel is None:
            continue  # outside the repository: not the pull request's to change
        linked = not builtin and through_link(repo.top_resolved(), dir_rel)
        trusted_paths = [
            p
            for p in repo.ls_files(commit, [dir_rel])
            if p.endswith(".rego") and not (builtin and p.endswith("_test.rego"))
        ]
        blobs = repo.read_blobs([f"{commit}:{p}" for p in trusted_paths])
        for p in trusted_paths:
            blob = blobs[f"{commit}:{p}"]
            if blob is None:
                continue
            shown = (
                f"policies/{Path(p).relative_to(dir_rel).as_posix()}"
                if builtin
                else _shown_literal(repo.top_resolved() / p, config)
            )
            files.append(parse_policy(decode_utf8(blob, shown), shown, builtin, repo.top / p))
            head = repo.top / p
            if linked:
                continue  # reported once for the directory, below
            if not head.exists():
                changes.append({"file": shown, "change": "removed", "kind": "policy"})
            elif head.read_bytes() != blob:
                changes.append({"file": shown, "change": "modified", "kind": "policy"})
        trusted_set = set(trusted_paths)
        if linked:
            # the work tree's directory (or one above it) is a symbolic link: the trusted files
            # were read at the directory's own path; what the link leads to is not read
            shown = _shown_literal(repo.top_resolved() / dir_rel, config)
            changes.append({"file": shown, "change": "modified", "kind": "policy"})
        elif d.is_dir():
            for head in sorted(d.rglob("*.rego")):
                hp = repo.relpath(head)
                if hp not in trusted_set and not (builtin and head.name.endswith("_test.rego")):
                    shown = f"policies/{head.relative_to(d).as_posix()}" if builtin else display_path(head, config.root)
                    changes.append({"file": shown, "change": "added", "kind": "policy"})
    return TrustedPolicies(ref=trusted_ref, commit=commit, files=files, config=trusted_config, changes=changes)


def _config_candidates(repo: GitRepo, config: Config) -> list[str]:
    """Where the trusted ref may hold the configuration: the file the work tree uses, then the
    default names in the configuration root (the directory streamwarden runs from)."""
    head = _literal_relpath(repo, config.path)
    out: list[str] = [head] if head is not None else []
    root = _relpath(repo, config.root)
    if root is not None:
        prefix = "" if root in ("", ".") else root + "/"
        out.extend(f"{prefix}{name}" for name in CONFIG_NAMES if f"{prefix}{name}" not in out)
    return out


def _relpath(repo: GitRepo, path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return repo.relpath(path)
    except ValueError:
        return None


def _literal_relpath(repo: GitRepo, path: Path | None) -> str | None:
    """``path``'s place in the repository as written, a symbolic link in it not followed: the
    repository-relative path of the absolute, normalised path (relative to the resolved current
    directory). None: outside the repository."""
    if path is None:
        return None
    absolute = os.path.normpath(os.path.join(os.fspath(Path.cwd().resolve()), os.fspath(path)))
    for top in (os.fspath(repo.top_resolved()), os.fspath(repo.top)):
        rel = relative_posix(Path(absolute), Path(top))
        if rel is not None:
            return "" if rel == "." else rel
    return None


def _shown_literal(path: Path, config: Config) -> str:
    """``path`` as shown (root-relative) where it is, a symbolic link in it not followed."""
    return display_path(path, config.root, resolved=path)
