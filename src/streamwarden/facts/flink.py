"""Live facts from the Flink REST API (``facts.flink``), for ``check --env`` / ``facts --env``.

The job of a pipeline is found by ``job.name`` in one shared ``/jobs/overview`` call: the newest
RUNNING job with that name (else the newest active one, else the newest finished one); other live
jobs with the same name are reported as ``duplicates``. Per job, the details, checkpoint config,
checkpoint statistics, exception history and job metrics are read concurrently (bounded by
``flink.concurrency``), then backpressure for each listed vertex of a running job (at most
``flink.rest_sections.MAX_VERTICES`` per job). Every section says whether it is available and, if not, why. The shape
is documented in docs/facts-flink.md.

Connection details come only from ``streamwarden.yaml`` (``environments.<name>.flink``), never
from a contract; secrets never appear in the facts: every string the gatherer returns (job and
vertex names, exception texts, paths, labels, errors) passes ``streamwarden.core.secrets.scrub_tree``
once, at the end.
"""

from __future__ import annotations

import difflib
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core import secrets
from streamwarden.facts.source import GatherContext, Subject, available, failed, not_configured, unavailable
from streamwarden.flink import rest_sections as sec
from streamwarden.flink.rest import FlinkConfigError, FlinkRestClient, RestError, display_url, settings_from_env

_Result = tuple[Any, RestError | None]
_SECTIONS = ("job", "checkpoint_config", "checkpoints", "exceptions", "metrics")
METRICS_RETRY_DELAY_S = 0.3


@dataclass(frozen=True)
class FlinkSettings:
    """The Flink source's settings: the variables ``${VAR}`` and secrets of the environment's
    ``flink`` section read (None: the process's)."""

    environ: Mapping[str, str] | None = None


class FlinkSource:
    """``facts.flink``: the running job of each contract, over Flink's REST API, from the
    environment's ``flink`` section (no extra: the client is urllib)."""

    name = "flink"
    section = "flink"
    extra = None
    phase = "Flink: reading the running jobs"
    recovery = True

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        return bool(env.get("flink"))

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        return ()

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        return gather_many([s.data for s in subjects], env, ctx)


def gather_many(
    contracts: Sequence[Mapping[str, Any]], env: Mapping[str, Any], ctx: GatherContext
) -> list[dict[str, Any]]:
    """``facts.flink`` for each contract, in order, over one client and one ``/jobs/overview``
    call; contracts that share a ``job.name`` share one result. Not configured when the
    environment has no ``flink`` section (``environments.<name>.flink``, the timeout in ms;
    ``ctx.root`` resolves its ca_file, client_cert and client_key)."""
    flink_env = env.get("flink")
    if not flink_env:
        return [not_configured() for _ in contracts]
    names = [job_name(c) for c in contracts]
    unique = list(dict.fromkeys(names))
    settings = ctx.settings(FlinkSettings).environ
    environ = dict(settings) if settings is not None else None
    try:
        by_name = dict(zip(unique, gather_jobs(unique, dict(flink_env), ctx.root, environ), strict=True))
    except Exception as exc:  # a gatherer bug must not become a traceback; it is a gap in the facts
        return [failed("Flink facts", exc) for _ in contracts]
    return [by_name[n] for n in names]


def gather_flink(
    contracts: Sequence[dict[str, Any]],
    flink_env: dict[str, Any],
    root: Path,
    environ: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`gather_many` keyed by ``job.name`` (``flink_env``: ``environments.<name>.flink``)."""
    out = gather_many(contracts, {"flink": flink_env}, GatherContext.of(root, settings=[FlinkSettings(environ)]))
    return {job_name(c): facts for c, facts in zip(contracts, out, strict=True)}


def gather_flink_one(
    contract: dict[str, Any], flink_env: dict[str, Any], root: Path, environ: dict[str, str] | None = None
) -> dict[str, Any]:
    """One contract's ``facts.flink`` with its context spelled out (``init``)."""
    return gather_many([contract], {"flink": flink_env}, GatherContext.of(root, settings=[FlinkSettings(environ)]))[0]


def job_name(contract: Mapping[str, Any]) -> str:
    job = contract.get("job") if isinstance(contract, dict) else None
    name = job.get("name") if isinstance(job, dict) else None
    return name if isinstance(name, str) else ""


def gather_jobs(
    names: Sequence[str], flink_env: dict[str, Any], root: Path, environ: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """One ``facts.flink`` per entry of ``names``, in order. A repeated name is gathered again
    (the benchmark uses this to gather N pipelines' worth of requests); ``gather_flink`` dedupes."""
    try:
        settings = settings_from_env(flink_env, root, environ)
    except FlinkConfigError as exc:
        return [unavailable(str(exc)) for _ in names]
    with FlinkRestClient(settings) as client:
        return gather_with(client, names)


def gather_with(client: FlinkRestClient, names: Sequence[str]) -> list[dict[str, Any]]:
    """``gather_jobs`` on a client the caller owns (to reuse it, or to count its requests)."""
    out = _Gatherer(client).run(list(names))
    return [secrets.scrub_tree(facts, client.settings.secrets) for facts in out]


class _Gatherer:
    def __init__(self, client: FlinkRestClient) -> None:
        self.client = client
        self.url = client.url

    def get(self, path: str) -> _Result:
        try:
            return self.client.get_json(path), None
        except RestError as exc:
            return None, exc

    def run(self, names: list[str]) -> list[dict[str, Any]]:
        (overview, err), (config, _) = self.client.map(self.get, ["/jobs/overview", "/config"])
        if err is not None:
            return [unavailable(err.message) for _ in names]
        version = config.get("flink-version") if isinstance(config, dict) else None
        problem = sec.overview_problem(overview)
        if problem is not None:
            error = (
                f"{self.url}/jobs/overview answered JSON of an unexpected shape ({problem}): "
                "is rest_url the Flink REST endpoint?"
            )
            return [unavailable(error) for _ in names]
        jobs = sec.overview_jobs(overview)
        out = [self._base(name, jobs, version) for name in names]
        found = [i for i, f in enumerate(out) if f["job_found"]]
        raw = self._sections([out[i]["job_id"] for i in found])
        vanished = [k for k, i in enumerate(found) if _not_found(raw[k]["job"])]
        if vanished:  # a job listed a moment ago is gone: read the overview again, once
            again, err = self.get("/jobs/overview")
            jobs = sec.overview_jobs(again) if err is None and sec.overview_problem(again) is None else jobs
            for k in vanished:
                out[found[k]] = self._base(names[found[k]], jobs, version)
            redo = [k for k in vanished if out[found[k]]["job_found"]]
            for k, fresh in zip(redo, self._sections([out[found[k]]["job_id"] for k in redo]), strict=True):
                raw[k] = fresh
        for k, i in enumerate(found):
            if out[i]["job_found"]:
                out[i] = self._assemble(out[i], raw[k])
        assembled = [out[i] for i in found if out[i].get("available") and "job" in out[i]]
        self._backpressure(assembled)
        self._retry_empty_metrics(assembled)
        return out

    def _base(self, name: str, jobs: list[dict[str, Any]], version: Any) -> dict[str, Any]:
        same = [j for j in jobs if j["name"] == name]
        running = [j for j in same if j["state"] == "running"]
        active = [j for j in same if j["state"] not in sec.TERMINAL_STATES]
        pick = running or active or same
        chosen = pick[0] if pick else None
        facts: dict[str, Any] = {
            **available(),
            "rest_url": self.url,
            "flink_version": version if isinstance(version, str) else None,
            "job_name": name,
            "job_found": chosen is not None,
            "job_id": chosen["id"] if chosen else None,
            "job_ids": [j["id"] for j in same],
            "state": chosen["state"] if chosen else None,
            "duplicates": [
                {"id": j["id"], "state": j["state"], "start_time": j["start_time"]}
                for j in active
                if chosen is not None and j["id"] != chosen["id"]
            ],
            "jobs": jobs,
            "gathered_at": int(time.time() * 1000),
        }
        if chosen is None:
            names = sorted({j["name"] for j in jobs if j["state"] not in sec.TERMINAL_STATES})
            facts["similar_jobs"] = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        return facts

    def _sections(self, jids: list[str]) -> list[dict[str, _Result]]:
        metrics = ",".join(sec.JOB_METRICS)
        paths = {
            "job": "/jobs/{}",
            "checkpoint_config": "/jobs/{}/checkpoints/config",
            "checkpoints": "/jobs/{}/checkpoints",
            "exceptions": "/jobs/{}/exceptions?maxExceptions=20",
            "metrics": "/jobs/{}/metrics?get=" + urllib.parse.quote(metrics, safe=","),
        }
        calls = [paths[s].format(jid) for jid in jids for s in _SECTIONS]
        results = self.client.map(self.get, calls)
        n = len(_SECTIONS)
        return [dict(zip(_SECTIONS, results[k * n : (k + 1) * n], strict=True)) for k in range(len(jids))]

    def _assemble(self, facts: dict[str, Any], raw: dict[str, _Result]) -> dict[str, Any]:
        jid = facts["job_id"]
        scrub = self.client.scrub
        job_doc, job_err = raw["job"]
        if job_err is not None:
            gone = " (it vanished while its facts were read)" if job_err.kind == "not_found" else ""
            return {**unavailable(f"job {facts['job_name']!r} ({jid}): {job_err.message}{gone}"), **_ids(facts)}
        problem = sec.job_shape_problem(job_doc)
        if problem is not None:
            why = f"{self.url}/jobs/{jid} answered JSON of an unexpected shape ({problem}), not a Flink job"
            return {**unavailable(f"job {facts['job_name']!r} ({jid}): {why}"), **_ids(facts)}
        facts["job"] = sec.job_details(job_doc)
        cfg_err = raw["checkpoint_config"][1]
        if cfg_err is not None and cfg_err.kind == "not_found" and "not enabled" in cfg_err.message.lower():
            facts["checkpoint_config"] = sec.checkpointing_disabled()
        else:
            facts["checkpoint_config"] = _section(raw["checkpoint_config"], sec.checkpoint_config)
        facts["checkpoint_config"]["source"] = f"/jobs/{jid}/checkpoints/config"
        facts["checkpoints"] = _section(raw["checkpoints"], lambda d: sec.checkpoints(d, scrub))
        facts["exceptions"] = _section(raw["exceptions"], lambda d: sec.exceptions(d, scrub))
        facts["metrics"] = _section(raw["metrics"], sec.metrics)
        facts["backpressure"] = sec.missing("not read: the job is not running") | {"vertices": {}}
        facts["restarts"], facts["restarts_source"] = sec.restarts(facts["metrics"], facts["exceptions"])
        return facts

    def _backpressure(self, found: list[dict[str, Any]]) -> None:
        targets = [
            (f, v["id"]) for f in found if f["job"]["state"] == "running" for v in f["job"]["vertices"] if v["id"]
        ]
        results = self.client.map(self.get, [f"/jobs/{f['job_id']}/vertices/{vid}/backpressure" for f, vid in targets])
        for f in {id(f): f for f, _ in targets}.values():
            f["backpressure"] = sec.ok(vertices={}, level=None)
        for (f, vid), result in zip(targets, results, strict=True):
            f["backpressure"]["vertices"][vid] = _section(result, sec.backpressure)
        levels = {"ok": 0, "low": 1, "high": 2}
        for f in {id(f): f for f, _ in targets}.values():
            bp = f["backpressure"]
            errors = [v["error"] for v in bp["vertices"].values() if not v["available"]]
            if errors:
                bp.update(available=False, error=errors[0])
            seen = [v.get("level") for v in bp["vertices"].values() if v.get("level") in levels]
            bp["level"] = max(seen, key=lambda x: levels[x]) if seen else None

    def _retry_empty_metrics(self, found: list[dict[str, Any]]) -> None:
        """Flink's metric cache answers ``[]`` on the first request after a while: ask once more."""
        empty = [f for f in found if f["metrics"].get("available") and not f["metrics"]["values"]]
        if not empty:
            return
        time.sleep(METRICS_RETRY_DELAY_S)
        query = urllib.parse.quote(",".join(sec.JOB_METRICS), safe=",")
        results = self.client.map(self.get, [f"/jobs/{f['job_id']}/metrics?get={query}" for f in empty])
        for f, result in zip(empty, results, strict=True):
            f["metrics"] = _section(result, sec.metrics)
            if f["metrics"].get("available") and not f["metrics"]["values"]:
                f["metrics"] = sec.missing("Flink's metric cache returned no values yet (it refreshes every 10 s)")
            f["restarts"], f["restarts_source"] = sec.restarts(f["metrics"], f["exceptions"])


def _section(result: _Result, normalize: Any) -> dict[str, Any]:
    doc, err = result
    if err is not None:
        return sec.missing(err.message)
    try:
        out: dict[str, Any] = normalize(doc)
    except sec.ShapeError as exc:
        return sec.missing(f"an answer of an unexpected shape: {exc}")
    except (TypeError, ValueError, AttributeError) as exc:  # an answer of an unexpected shape
        return sec.missing(f"unexpected answer shape ({type(exc).__name__})")
    return out


def _not_found(result: _Result) -> bool:
    return result[1] is not None and result[1].kind == "not_found"


def _ids(facts: dict[str, Any]) -> dict[str, Any]:
    keep = ("rest_url", "flink_version", "job_name", "job_found", "job_id", "job_ids", "duplicates", "gathered_at")
    return {k: facts[k] for k in keep}


__all__ = [
    "FlinkSettings",
    "FlinkSource",
    "display_url",
    "gather_flink",
    "gather_flink_one",
    "gather_jobs",
    "gather_many",
    "gather_with",
    "job_name",
]
