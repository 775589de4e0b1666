"""The one gathering pipeline: every registered source (facts/registry.py), in order, over the
subjects of a run. ``check`` (its repository sources per contract, its live ones per chunk),
``check --env``, ``facts``, ``gate`` and ``evidence`` all gather here; none calls a source by name.

A source a run does not read is ``not_configured`` (no rule treats it as missing). Before a check's
live source reads anything, the extras the contracts need in this environment are checked: a
missing one is a broken setup (``SetupError``, exit 2), not a gap in the facts. The recovery verbs
(``recovery=True``) read only the sources that serve a restore decision (``Source.recovery``), and
a missing extra there is a gap in the facts like any unreadable source: the gate fails closed.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from streamwarden.core import progress
from streamwarden.core.errors import SetupError
from streamwarden.facts import registry
from streamwarden.facts.source import GatherContext, Subject, not_configured

ALL, STATIC, LIVE = "all", registry.STATIC, registry.LIVE


def gather(
    subjects: Sequence[Subject],
    env: Mapping[str, Any] | None,
    ctx: GatherContext,
    which: str = ALL,
    *,
    recovery: bool = False,
) -> None:
    """Fill each subject's ``facts`` from the registered sources of the kinds ``which`` names
    (``STATIC``: the repository's; ``LIVE``: an environment's, read only when ``env`` is one, not
    None; ``ALL``: both). Every section is there, ``not_configured`` where its source is not read, in the
    registry's order; ``access`` (the Iceberg source's decision) comes after them. A ``LIVE`` pass
    writes the live sections only: ``check`` gathers them per chunk of contracts, then merges them
    into each contract's ``STATIC`` pass. ``recovery``: a gate's or an evidence record's gathering
    (only the sources that serve it; no extras check)."""
    kinds = {STATIC, LIVE} if which == ALL else {which}
    wanted = [name for name in registry.names() if registry.kind(name) in kinds]
    for s in subjects:
        for name in wanted if which == LIVE else registry.names():
            s.facts.setdefault(name, not_configured())
    live = LIVE in kinds and env is not None
    environment: Mapping[str, Any] = env or {}
    if live and not recovery:
        require_extras(subjects, environment)
    for name in wanted:
        kind = registry.kind(name)
        if kind == LIVE and not live:
            continue
        source = registry.source(name)
        if recovery and not source.recovery:
            continue
        if kind == LIVE:
            needing = sum(1 for s in subjects if source.needed(s.data, environment))
            if needing:
                progress.set_phase(source.phase, needing)
        for s, section in zip(subjects, source.gather(subjects, environment, ctx), strict=True):
            s.facts[name] = section
    if live:
        progress.set_phase("evaluating policies")


def recovery_sources() -> tuple[str, ...]:
    """The sections a recovery verb reads (the gate's source status lists them)."""
    return tuple(name for name in registry.names() if registry.source(name).recovery)


def require_extras(subjects: Sequence[Subject], env: Mapping[str, Any]) -> None:
    """Fail before gathering when the environment configures a section a contract of this run
    needs and the package of its extra cannot be imported (``pip install 'streamwarden[iceberg]'``
    was not run). A section no contract needs asks for nothing; an unreachable service is not
    checked here (it is a gap in the facts, SW-FACT-001)."""
    needed: dict[tuple[str, str, str], None] = {}
    for name in registry.names():
        if registry.kind(name) != LIVE:
            continue
        source = registry.source(name)
        for s in subjects:
            needed.update(dict.fromkeys(source.modules(s.data, env)))
    for section, extra, package in needed:
        try:
            importlib.import_module(package)
        except ImportError as exc:
            what = f"{section.capitalize()} (its `{section}` section in streamwarden.yaml)"
            if section != extra:
                what += f" for data scans, which read the table through {package},"
            raise SetupError(
                f"the environment configures {what} but {package} is not installed ({exc}): "
                f"install streamwarden's {extra} extra, then run the check again",
                hint=f"pip install 'streamwarden[{extra}]'",
            ) from None


def gather_one(
    data: Mapping[str, Any],
    file: Path | None,
    root: Path,
    env: Mapping[str, Any] | None = None,
    now_ms: int = 0,
    settings: Sequence[object] = (),
) -> dict[str, Any]:
    """One contract's ``input.facts`` through every source: the repository's, and with ``env``
    the live ones (``settings``: the sources' settings objects, their defaults otherwise)."""
    subject = Subject(dict(data), file)
    gather([subject], env, GatherContext.of(root, now_ms, settings))
    return subject.facts
