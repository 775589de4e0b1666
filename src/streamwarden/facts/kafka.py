"""Live facts from a Kafka broker (``facts.kafka``), for ``check --env``, ``facts --env``, ``gate``
and ``evidence``: per topic a restore reads, its ``retention.ms``, ``retention.bytes`` and
``cleanup.policy`` (DescribeConfigs) and, per partition, the earliest and the latest offset
(ListOffsets). Read with confluent-kafka (the ``kafka`` extra, imported inside functions).

The topics are those of the contract's ``job.sources[]`` entries of kind ``kafka`` (their
``topic``) and, in the gate, those the savepoint's Kafka splits name (``facts.savepoint.kafka``,
gathered before this source). Hosts and credentials come only from the environment's ``kafka``
section of ``streamwarden.yaml`` (the password from the environment variable it names), never
from a contract; a contract names topics only. A broker that cannot be read (down, a timeout,
authentication refused, a topic it does not know) makes the section unavailable: SW-FACT-001
reports it and the gate fails closed. Every error is scrubbed of the configured secrets. Facts
only: SW-SRC-002, SW-SRC-003 and SW-REC-006 decide. The shape is documented in docs/facts-kafka.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.core import secrets
from streamwarden.facts.source import GatherContext, Subject, available, failed, not_configured, unavailable

DEFAULT_TIMEOUT_MS = 10_000
_CONFIG_KEYS = ("retention.ms", "retention.bytes", "cleanup.policy")


@dataclass(frozen=True)
class KafkaSettings:
    """The Kafka source's settings: the variables its section's ``password_env`` reads (None:
    the process's)."""

    environ: Mapping[str, str] | None = None


class KafkaConfigError(Exception):
    """The environment's kafka section cannot be used (a variable it names is not set)."""


def kafka_sources(contract: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    """The contract's job.sources[] entries of kind kafka (any case), with their index."""
    job = contract.get("job")
    sources = job.get("sources") if isinstance(job, Mapping) else None
    if not isinstance(sources, list):
        return []
    return [
        (i, s)
        for i, s in enumerate(sources)
        if isinstance(s, Mapping) and isinstance(s.get("kind"), str) and s["kind"].strip().lower() == "kafka"
    ]


class KafkaSource:
    """``facts.kafka``: the topics of the contract's Kafka sources (and of the savepoint a gate
    restores), from the environment's ``kafka`` section."""

    name = "kafka"
    section = "kafka"
    extra = "kafka"
    phase = "Kafka: reading topic settings and offsets"
    recovery = True

    def needed(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> bool:
        return bool(env.get("kafka")) and bool(kafka_sources(contract))

    def modules(self, contract: Mapping[str, Any], env: Mapping[str, Any]) -> Sequence[tuple[str, str, str]]:
        return [("kafka", "kafka", "confluent_kafka")] if self.needed(contract, env) else []

    def gather(self, subjects: Sequence[Subject], env: Mapping[str, Any], ctx: GatherContext) -> list[dict[str, Any]]:
        if not env.get("kafka"):
            return [not_configured() for _ in subjects]
        settings = ctx.settings(KafkaSettings).environ
        environ: Mapping[str, str] = os.environ if settings is None else settings
        reader: _Reader | None = None
        out: list[dict[str, Any]] = []
        try:
            for s in subjects:
                if not self.needed(s.data, env):
                    out.append(not_configured())
                    continue
                if reader is None:
                    reader = _Reader(dict(env["kafka"]), ctx.root, environ)
                out.append(reader.section(s))
        except Exception as exc:  # a gatherer bug must not become a traceback; it is a gap in the facts
            what = failed("Kafka facts", exc)
            what["error"] = secrets.scrub(what["error"], reader.secrets if reader else ())
            out += [what for _ in range(len(subjects) - len(out))]
        return out


def topics_of(s: Subject) -> dict[str, list[str]]:
    """The topics to read for a subject: each contract source's ``topic`` (with the names of the
    sources reading it), then the topics of the savepoint's Kafka splits (the restore's)."""
    topics: dict[str, list[str]] = {}
    for i, source in kafka_sources(s.data):
        topic = source.get("topic")
        if isinstance(topic, str) and topic:
            name = source.get("name")
            topics.setdefault(topic, []).append(name if isinstance(name, str) else f"job.sources[{i}]")
    savepoint = s.facts.get("savepoint")
    kafka = savepoint.get("kafka") if isinstance(savepoint, Mapping) and savepoint.get("available") else None
    for p in (kafka or {}).get("partitions") or []:
        if isinstance(p, Mapping) and isinstance(p.get("topic"), str):
            topics.setdefault(p["topic"], [])
    return topics


class _Reader:
    """One admin client for a gathering (created on the first topic to read)."""

    def __init__(self, kafka_env: dict[str, Any], root: Path, environ: Mapping[str, str]) -> None:
        self.env = kafka_env
        servers = kafka_env.get("bootstrap_servers")
        self.servers = [str(s) for s in servers] if isinstance(servers, list) else [str(servers or "")]
        timeout = kafka_env.get("timeout")
        self.timeout_ms = timeout if isinstance(timeout, int) and timeout > 0 else DEFAULT_TIMEOUT_MS
        self.secrets: list[str] = []
        self.problem: str | None = None
        self.config: dict[str, Any] = {}
        try:
            self.config = self._client_config(root, environ)
        except KafkaConfigError as exc:
            self.problem = str(exc)
        self.admin: Any = None
        self.errors: list[str] = []
        self.read: dict[str, dict[str, Any] | _Unreadable] = {}
        self.down: str | None = None

    def _client_config(self, root: Path, environ: Mapping[str, str]) -> dict[str, Any]:
        config: dict[str, Any] = {
            "bootstrap.servers": ",".join(self.servers),
            "socket.timeout.ms": self.timeout_ms,
            "socket.connection.setup.timeout.ms": self.timeout_ms,
            "log_level": 0,  # librdkafka logs to stderr: its errors are collected instead (error_cb)
            "error_cb": self._on_error,
        }
        protocol = self.env.get("security_protocol")
        if isinstance(protocol, str):
            config["security.protocol"] = protocol
        sasl = self.env.get("sasl")
        if isinstance(sasl, Mapping):
            password_env = str(sasl.get("password_env") or "")
            if password_env not in environ:
                raise KafkaConfigError(f"environment variable {password_env} (kafka.sasl.password_env) is not set")
            password = environ[password_env]
            self.secrets.append(password)
            secrets.register(password)
            config["sasl.mechanism"] = str(sasl.get("mechanism") or "PLAIN")
            config["sasl.username"] = str(sasl.get("username") or "")
            config["sasl.password"] = password
        ca_file = self.env.get("ca_file")
        if isinstance(ca_file, str):
            config["ssl.ca.location"] = str(root / ca_file)
        return config

    def _on_error(self, err: Any) -> None:
        self.errors.append(str(err.str()) if hasattr(err, "str") else str(err))

    def _why(self, exc: BaseException | None = None) -> str:
        """What went wrong, the broker's own words first (authentication, connection), scrubbed."""
        seen = list(dict.fromkeys(self.errors[-3:]))
        text = "; ".join(seen) if seen else ""
        if exc is not None:
            detail = str(exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else exc)
            text = f"{detail}; {text}" if text and detail not in text else (text or detail)
        return secrets.scrub(text or "no answer", self.secrets)

    def section(self, s: Subject) -> dict[str, Any]:
        servers = self.servers
        topics = topics_of(s)
        if self.problem is not None:
            return unavailable(self.problem, bootstrap_servers=servers)
        if not topics:
            return available(bootstrap_servers=servers, topics={})
        try:
            read = {topic: {"sources": names, **self._known(topic)} for topic, names in sorted(topics.items())}
        except _Unreadable as exc:
            return unavailable(str(exc), bootstrap_servers=servers)
        return secrets.scrub_tree(available(bootstrap_servers=servers, topics=read), self.secrets)  # type: ignore[no-any-return]

    def _known(self, topic: str) -> dict[str, Any]:
        """A topic's answer, read once per gathering (contracts reading one topic share it); a
        broker that did not answer is not asked again for the next topic, nor the next contract."""
        if self.down is not None:
            raise _Unreadable(self.down)
        found = self.read.get(topic)
        if isinstance(found, _Unreadable):
            raise found
        if found is None:
            try:
                found = self.read[topic] = self._topic(topic)
            except _Unreadable as exc:
                self.read[topic] = exc
                if exc.down:
                    self.down = str(exc)
                raise
        return found

    def _client(self) -> Any:
        if self.admin is None:
            from confluent_kafka.admin import AdminClient

            self.admin = AdminClient(self.config)
        return self.admin

    def _topic(self, topic: str) -> dict[str, Any]:
        admin = self._client()
        timeout_s = self.timeout_ms / 1000
        where = ", ".join(self.servers)
        try:  # DescribeTopics, not a metadata request: a broker may create a topic a metadata request names
            from confluent_kafka import TopicCollection

            found = admin.describe_topics(TopicCollection([topic]), request_timeout=timeout_s)[topic].result()
        except Exception as exc:
            if _unknown_topic(exc):
                raise _Unreadable(f"topic {topic!r} is not known to the Kafka broker at {where}") from None
            raise _Unreadable(
                f"the Kafka broker at {where} did not answer within {timeout_s:g}s ({self._why(exc)})", down=True
            ) from None
        partitions = sorted(p.id for p in found.partitions)
        if not partitions:
            raise _Unreadable(f"topic {topic!r} has no partitions on the Kafka broker at {where}")
        return {
            **self._config(topic, timeout_s, where),
            "partitions": self._offsets(topic, partitions, timeout_s, where),
        }

    def _config(self, topic: str, timeout_s: float, where: str) -> dict[str, Any]:
        from confluent_kafka.admin import ConfigResource, ResourceType

        resource = ConfigResource(ResourceType.TOPIC, topic)
        try:
            entries = self._client().describe_configs([resource], request_timeout=timeout_s)[resource].result()
        except Exception as exc:
            raise _Unreadable(
                f"the Kafka broker at {where} did not describe topic {topic!r}'s configuration ({self._why(exc)})"
            ) from None
        values = {k: entries[k].value if k in entries else None for k in _CONFIG_KEYS}
        policy = values["cleanup.policy"]
        return {
            "retention_ms": _number(values["retention.ms"]),
            "retention_bytes": _number(values["retention.bytes"]),
            "cleanup_policy": [p.strip() for p in str(policy).split(",") if p.strip()] if policy is not None else None,
        }

    def _offsets(self, topic: str, partitions: list[int], timeout_s: float, where: str) -> list[dict[str, Any]]:
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import OffsetSpec

        ends: dict[str, dict[int, tuple[int, int]]] = {}
        specs = (
            ("earliest", OffsetSpec.earliest()),
            ("latest", OffsetSpec.latest()),
            ("oldest record", OffsetSpec.for_timestamp(0)),  # the first record stamped at or after 0: its timestamp
        )
        for end, spec in specs:
            request = {TopicPartition(topic, p): spec for p in partitions}
            try:
                futures = self._client().list_offsets(request, request_timeout=timeout_s)
                ends[end] = {tp.partition: _offset_and_time(f.result()) for tp, f in futures.items()}
            except Exception as exc:
                raise _Unreadable(
                    f"the Kafka broker at {where} did not list topic {topic!r}'s {end} offsets ({self._why(exc)})"
                ) from None
        out: list[dict[str, Any]] = []
        for p in partitions:
            earliest, latest = ends["earliest"][p][0], ends["latest"][p][0]
            first, stamp = ends["oldest record"][p]
            out.append(
                {
                    "partition": p,
                    "earliest": earliest,
                    "latest": latest,
                    "earliest_timestamp_ms": stamp if first == earliest and stamp >= 0 and latest > earliest else None,
                }
            )
        return out


class _Unreadable(Exception):
    """The broker could not be read for a topic (the message says why, scrubbed); ``down``: it did
    not answer at all."""

    def __init__(self, message: str, *, down: bool = False) -> None:
        super().__init__(message)
        self.down = down


def _offset_and_time(info: Any) -> tuple[int, int]:
    stamp = getattr(info, "timestamp", -1)
    return int(info.offset), int(stamp) if isinstance(stamp, int) else -1


def _unknown_topic(exc: BaseException) -> bool:
    err = exc.args[0] if exc.args else None
    return "UNKNOWN_TOPIC" in str(getattr(err, "name", lambda: "")())


def _number(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None
