"""A Flink 2.x ``config.yaml`` is read exactly as Flink's own loader reads it, and a Kubernetes
manifest as kubectl reads it.

Flink 2.3.0 loads ``config.yaml`` with snakeyaml-engine (YAML 1.2's core schema): a ``<<: *anchor``
merge key is a key like any other, ``0x10`` is 16, ``1e3`` a float, ``yes`` text, and some files
it refuses outright (a key without a value, a tag it has no constructor for, a key that is not a
string, more than 50 aliases of collections, ``+.inf``). kubectl reads a manifest as YAML 1.1 and
applies merge keys.

The oracle is Flink's loader itself: ``GlobalConfiguration`` from the test venv's flink-dist jar
(tests/flink_loader.py) reads each file below, and ``streamwarden facts`` (the real CLI) must have
read the same keys, the same values or errors for every option it types, and refuse (an error
finding) exactly the files Flink refuses. The tests that need the JDK skip, saying why, without one.

For a FlinkDeployment the oracle is kubectl itself (``kubectl label --local -o json``: the JSON
it would send to the API server, read with no cluster), then what the operator makes of that JSON
(``ConfigObjectNode.asFlatMap``: keys in the stored, sorted order, each value's Jackson
``asText``, lists joined with ``;``), written out in :func:`_operator_flat_map`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tests.cli import sw
from tests.conftest import CLEAN_CONTRACT, NOW
from tests.flink_loader import FlinkLoader, missing_reason

from streamwarden.flink.config import BY_KEY, ValueType

MERGED = """\
ckpt: &ckpt
  interval: 60 s
  timeout: 10 min
execution:
  checkpointing:
    <<: *ckpt
    mode: EXACTLY_ONCE
"""

# name -> a config.yaml whose reading by Flink and by a YAML 1.1 reader differ somewhere
TRICKY: dict[str, str] = {
    "merge key": MERGED,
    "merge key at the top": "<<: {execution.checkpointing.interval: 60 s}\nstate.backend.type: hashmap\n",
    "merge key in a flow mapping": "execution.checkpointing: {<<: {interval: 60 s}, timeout: 1 min}\n",
    "merge key quoted": '"<<": {execution.checkpointing.interval: 60 s}\n',
    "numbers as durations": (
        "execution.checkpointing.interval: 0x10\n"
        "execution.checkpointing.timeout: 0o17\n"
        "execution.checkpointing.min-pause: 010\n"
        "execution.checkpointing.aligned-checkpoint-timeout: +12\n"
        "restart-strategy.fixed-delay.delay: 1_000\n"
        "restart-strategy.failure-rate.delay: 1e3\n"
        "restart-strategy.failure-rate.failure-rate-interval: .5\n"
        "restart-strategy.exponential-delay.initial-backoff: 1.\n"
        "restart-strategy.exponential-delay.max-backoff: 12:30\n"
        "pipeline.auto-watermark-interval: 0b10\n"
        "state.changelog.periodic-materialize.interval: 99999999999999999999\n"
        "execution.buffer-timeout.interval: -0\n"
        "restart-strategy.exponential-delay.reset-backoff-threshold: '0x10'\n"
    ),
    "numbers as text": (
        "custom.hex: 0x1F\ncustom.octal: 0o17\ncustom.float: 12345678.9\ncustom.small: 0.0001\n"
        "custom.exp: 1.5E+3\ncustom.inf: -.inf\ncustom.nan: .NaN\ncustom.date: 2024-02-30\n"
        "custom.time: 12:30\ncustom.under: 1_000\ncustom.big: 0xFFFFFFFFFFFF\ncustom.sexa: 190:20:30\n"
        "execution.checkpointing.dir: 0x10\n"
    ),
    "booleans": (
        "execution.checkpointing.unaligned.enabled: TRUE\n"
        "execution.checkpointing.incremental: True\n"
        "pipeline.auto-generate-uids: yes\n"
        "pipeline.object-reuse: on\n"
        "pipeline.force-kryo: 'true'\n"
        "pipeline.generic-types: y\n"
        "custom.flag: FALSE\n"
    ),
    "integers": (
        "execution.checkpointing.max-concurrent-checkpoints: 0x2\n"
        "execution.checkpointing.tolerable-failed-checkpoints: 010\n"
        "execution.checkpointing.num-retained: +3\n"
        "parallelism.default: 1e0\n"
        "taskmanager.numberOfTaskSlots: 4.\n"
        "pipeline.max-parallelism: 0o200\n"
    ),
    "memory": (
        "taskmanager.memory.process.size: 0x400\n"
        "jobmanager.memory.process.size: 1e3\n"
        "taskmanager.memory.managed.size: 010\n"
    ),
    "anchors and aliases": (
        "base: &b 30 s\n"
        "execution.checkpointing.interval: *b\n"
        "shared: &m {timeout: 1 min, min-pause: 0x10}\n"
        "execution.checkpointing: *m\n"
        "execution:\n  checkpointing.max-concurrent-checkpoints: &n 2\n"
        "custom.count: *n\n"
    ),
    "tags Flink reads": (
        "execution.checkpointing.interval: !!str 10\n"
        "execution.checkpointing.timeout: !!int '20'\n"
        "execution.checkpointing.min-pause: !!float 1\n"
        "custom.binary: !!binary AAEC\n"
        "custom.verbatim: !<tag:yaml.org,2002:str> 5\n"
        "custom.set: !!set {a, b}\n"
        "custom.seq: !!seq [1, x]\n"
        "execution.checkpointing.unaligned.enabled: !!bool FALSE\n"
    ),
    "nested and flat, flat last": (
        "execution:\n  checkpointing:\n    interval: 1 s\nexecution.checkpointing.interval: 2 s\n"
    ),
    "nested and flat, nested last": (
        "execution.checkpointing.interval: 2 s\nexecution:\n  checkpointing:\n    interval: 1 s\n"
    ),
    "empty mappings and strings": (
        "execution.checkpointing: {}\nstate: {}\ncustom.empty: ''\nexecution.checkpointing.dir: \"\"\n"
        'custom.quoted: "60 s"\n'
    ),
    "a null key": "~: 1\nexecution.checkpointing.interval: 5 s\n",
    "escapes": 'custom.slash: "a\\/b"\ncustom.tab: "a\\tb"\ncustom.unicode: "\\u00e9"\n',
    "several documents": "execution.checkpointing.interval: 1 s\n---\nstate.backend.type: rocksdb\n",
    "empty": "# nothing set\n",
    # what Flink's loader refuses: the whole file
    "a key without a value": "execution.checkpointing.interval:\nstate.backend.type: rocksdb\n",
    "a nested key without a value": "execution:\n  checkpointing:\n    interval: ~\n",
    "a timestamp tag": "execution.checkpointing.interval: 1 s\ncustom.at: !!timestamp 2024-01-01\n",
    "a local tag": "execution.checkpointing.interval: !duration 1 s\n",
    "an integer key": "1: x\nexecution.checkpointing.interval: 1 s\n",
    "a boolean key": "true: x\n",
    "plus infinity": "custom.limit: +.inf\n",
    "a boolean tag on text": "execution.checkpointing.unaligned.enabled: !!bool yes\n",
    "an int tag on text": "execution.checkpointing.max-concurrent-checkpoints: !!int 1_0\n",
    "an omap": "custom.ordered: !!omap [{a: 1}]\n",
    "not a mapping": "- execution.checkpointing.interval: 1 s\n",
    "51 aliases of a mapping": "m: &m {a: 1}\n" + "".join(f"k{i}: *m\n" for i in range(51)),
    "50 aliases of a mapping": "m: &m {a: 1}\n" + "".join(f"k{i}: *m\n" for i in range(50)),
}

_TYPES = {
    ValueType.DURATION: "duration",
    ValueType.BOOL: "bool",
    ValueType.INT: "int",
    ValueType.MEMORY: "memory",
    ValueType.STRING: "string",
}


def _repo(root: Path, config: str, name: str = "config.yaml") -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(
        CLEAN_CONTRACT.replace("job:\n", f"job:\n  deployment: [../{name}]\n", 1), encoding="utf-8"
    )
    (root / name).write_text(config, encoding="utf-8")
    return root


def _deployment(root: Path) -> dict[str, Any]:
    p = sw("facts", "orders-enrichment", "--now", NOW, cwd=root)
    assert p.code == 0, p
    deployment: dict[str, Any] = p.json()["facts"]["deployment"]
    return deployment


def _refused(deployment: dict[str, Any]) -> list[str]:
    """Why streamwarden says Flink refuses the file (an unreadable file is refused too)."""
    out = [u["error"] for u in deployment.get("unreadable", [])]
    out += [
        p["message"]
        for p in deployment.get("problems", [])
        if p["code"] in ("flink-refuses-file", "several-documents") and p["severity"] == "error"
    ]
    return out


def _asked(deployment: dict[str, Any]) -> dict[str, str]:
    """The keys the file sets, with the type Flink's reader is asked to read each as."""
    out: dict[str, str] = {}
    for key, entry in deployment.get("config", {}).items():
        if entry["default"]:
            continue
        option = BY_KEY.get(key)
        if option is None:
            out[key] = "string"
        elif option.type in _TYPES:
            out[key] = _TYPES[option.type]
    return out


@pytest.fixture(scope="module")
def flink(tmp_path_factory: pytest.TempPathFactory) -> FlinkLoader:
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    return FlinkLoader(tmp_path_factory.mktemp("flink-loader"))


def test_every_tricky_file_is_read_as_flink_2_3_reads_it(tmp_path: Path, flink: FlinkLoader) -> None:
    ours: dict[str, dict[str, Any]] = {}
    requests: list[tuple[Path, dict[str, str]]] = []
    for i, (name, text) in enumerate(TRICKY.items()):
        root = _repo(tmp_path / f"case{i}", text)
        ours[name] = _deployment(root)
        conf = tmp_path / f"conf{i}"
        conf.mkdir()
        (conf / "config.yaml").write_text(text, encoding="utf-8")
        requests.append((conf, _asked(ours[name])))
    answers = flink.read(requests)
    mismatches: list[str] = []
    for (name, deployment), answer in zip(ours.items(), answers, strict=True):
        refused = _refused(deployment)
        if "error" in answer:
            if not refused:
                mismatches.append(f"{name}: Flink refuses the file ({answer['error']}), streamwarden reads it")
            continue
        if refused:
            mismatches.append(f"{name}: Flink reads the file, streamwarden says it refuses it: {refused}")
            continue
        config = deployment["config"]
        set_here = {k for k, e in config.items() if not e["default"]}
        if set(answer["keys"]) != set_here:
            mismatches.append(f"{name}: Flink's keys {sorted(answer['keys'])} != streamwarden's {sorted(set_here)}")
        for key, got in answer["typed"].items():
            entry = config[key]
            if "error" in got:
                if "error" not in entry:
                    mismatches.append(
                        f"{name}: {key}: Flink refuses the value ({got['error']}), streamwarden reads "
                        f"{entry['value']!r}"
                    )
            elif "error" in entry:
                mismatches.append(f"{name}: {key}: Flink reads {got['value']!r}, streamwarden: {entry['error']}")
            elif isinstance(entry["value"], (str, int, bool)) and entry["value"] != got["value"]:
                mismatches.append(f"{name}: {key}: Flink reads {got['value']!r}, streamwarden {entry['value']!r}")
    assert not mismatches, "\n".join(mismatches)


def test_the_issues_merge_key_leaves_checkpointing_off_and_says_so(tmp_path: Path) -> None:
    """The issue's file: checkpoint keys from ``<<: *ckpt``. Flink 2.3 sets
    execution.checkpointing.<<.interval, so checkpointing is off (SW-CKPT-001), and a finding at
    the ``<<`` line says what Flink does with it."""
    root = _repo(tmp_path, MERGED)
    p = sw("check", "--no-cache", "--now", NOW, "--format", "json", cwd=root)
    findings = p.json()["findings"]
    off = [f for f in findings if f["rule"] == "SW-CKPT-001"]
    assert off and "checkpointing is off" in off[0]["message"], findings
    [merge] = [f for f in findings if f["rule"] == "SW-DEPLOY-004" and f["evidence"].get("code") == "merge-key"]
    assert merge["severity"] == "error" and merge["line"] == 6, merge
    assert "execution.checkpointing.<<.interval (not execution.checkpointing.interval)" in merge["message"]
    assert "does not apply" in merge["message"]
    config = _deployment(root)["config"]
    assert config["execution.checkpointing.interval"]["default"] is True
    assert "execution.checkpointing.<<.interval" in config
    assert p.code == 1


def test_a_number_flink_reads_otherwise_is_reported_with_what_flink_reads(tmp_path: Path) -> None:
    root = _repo(tmp_path, "execution.checkpointing.interval: 0x10\nexecution.checkpointing.timeout: 1e3\n")
    config = _deployment(root)["config"]
    interval = config["execution.checkpointing.interval"]
    assert interval["value"] == 16 and interval["raw"] == "0x10", interval  # 16 ms, as Flink reads it
    timeout = config["execution.checkpointing.timeout"]
    assert timeout["value"] is None and "which Flink reads as YAML 1.2 does: 1000.0" in timeout["error"], timeout


def test_a_file_flink_refuses_is_an_error_that_says_so(tmp_path: Path) -> None:
    root = _repo(tmp_path, "execution.checkpointing.interval: 60 s\nstate.backend.type:\n")
    p = sw("check", "--no-cache", "--now", NOW, "--format", "json", cwd=root)
    [refused] = [f for f in p.json()["findings"] if f["evidence"].get("code") == "flink-refuses-file"]
    assert refused["severity"] == "error" and refused["line"] == 2, refused
    assert "Flink 2.x refuses this config.yaml" in refused["message"]
    assert "'state.backend.type' has no value" in refused["message"]
    assert p.code == 1


def test_a_yaml_1_1_date_that_does_not_exist_is_text_to_flink(tmp_path: Path) -> None:
    """YAML 1.1 reads 2024-02-30 as a date that does not exist (an unreadable file before); YAML
    1.2 has no dates: Flink reads the text."""
    root = _repo(tmp_path, "custom.release: 2024-02-30\nexecution.checkpointing.interval: 1 min\n")
    deployment = _deployment(root)
    assert "unreadable" not in deployment, deployment
    assert deployment["config"]["custom.release"]["value"] == "2024-02-30"
    assert deployment["config"]["execution.checkpointing.interval"]["value"] == 60_000


def test_a_flink_deployment_applies_merge_keys_as_kubectl_does(tmp_path: Path) -> None:
    """kubectl reads a manifest as YAML 1.1: the merge key is applied, and the explicit key wins
    over the merged one."""
    manifest = (
        "apiVersion: flink.apache.org/v1beta1\n"
        "kind: FlinkDeployment\n"
        "metadata:\n  name: orders-enrichment\n"
        "spec:\n"
        "  flinkVersion: v2_1\n"
        "  flinkConfiguration:\n"
        "    <<: &ckpt {execution.checkpointing.interval: 60 s, execution.checkpointing.timeout: 5 min}\n"
        "    execution.checkpointing.timeout: 10 min\n"
        "    taskmanager.numberOfTaskSlots: 0x2\n"
    )
    config = _deployment(_repo(tmp_path, manifest, "fd.yaml"))["config"]
    assert config["execution.checkpointing.interval"]["value"] == 60_000
    assert config["execution.checkpointing.interval"]["line"] == 8
    timeout = config["execution.checkpointing.timeout"]
    assert timeout["value"] == 600_000 and timeout["line"] == 9, timeout


RESOURCE = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata:
  name: orders-enrichment
spec:
  flinkVersion: v2_1
  flinkConfiguration:
{conf}"""

# name -> the flinkConfiguration block of a FlinkDeployment (indented 4), read by kubectl
RESOURCES: dict[str, str] = {
    "numbers": (
        "    acme.octal: 010\n    acme.hex: 0x10\n    acme.oct: 0o10\n    acme.bin: 0b11\n    acme.plus: +12\n"
        "    acme.under: 1_000\n    acme.exp: 1e3\n    acme.frac: 1.5\n    acme.dot: .5\n    acme.eight: 08\n"
        "    acme.big: 99999999999999999999\n    acme.huge: 1e21\n    acme.tiny: 1e-8\n    acme.over: 1e400\n"
        "    acme.sexa: 12:30\n    acme.date: 2024-01-01\n    acme.stamp: 2024-01-01 10:00:00\n"
        "    acme.quoted: '010'\n    acme.neg: -0x1F\n    acme.zero: -0\n"
        "    execution.checkpointing.interval: 0x2710\n"
    ),
    "booleans": (
        "    acme.y: y\n    acme.n: N\n    acme.yes: Yes\n    acme.on: on\n    acme.off: OFF\n    acme.true: TRUE\n"
        "    execution.checkpointing.unaligned.enabled: y\n"
    ),
    "keys": "    acme:\n      yes: 1\n      1.5: 2\n      0x10: 3\n      1e3: 4\n      n: 5\n",
    "merge keys in order": (
        "    acme.a: 1\n    <<: [{acme.a: 2, acme.b: 2}, {acme.b: 3, acme.c: 3}]\n    acme.c: 4\n"
        "    <<: {execution.checkpointing.interval: 60 s}\n"
    ),
    "nested and flat": (
        "    execution.checkpointing.interval: 1 s\n    execution:\n      checkpointing:\n        interval: 2 s\n"
        "    acme:\n      x: nested\n    acme.x: flat\n"
    ),
    "lists and empties": "    acme.list: [a, 1, true, 1.5]\n    acme.empty-list: []\n    acme.empty-map: {}\n",
}


# Java's Double.toString (Jackson's asText of a DoubleNode) of the JSON doubles above (jshell)
JAVA_DOUBLES = {1.5: "1.5", 0.5: "0.5", 1e21: "1.0E21", 1e-8: "1.0E-8"}


def _operator_flat_map(node: Any, prefix: str = "") -> dict[str, str]:
    """ConfigObjectNode.asFlatMap over the JSON kubectl sends: each value as Jackson's asText."""

    def as_text(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return JAVA_DOUBLES[v]
        if isinstance(v, (dict, list)):
            return ""
        return "null" if v is None else str(v)

    out: dict[str, str] = {}
    for k, v in node.items():  # kubectl writes the keys sorted, as the API server stores them
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(_operator_flat_map(v, key))
        elif isinstance(v, list):
            if v:
                out[key] = ";".join(as_text(i) for i in v)
        else:
            out[key] = as_text(v)
    return out


def _kubectl_json(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        ["kubectl", "label", "--local", "-f", str(path), "streamwarden-test=1", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KUBECONFIG": os.devnull},
        check=True,
    )
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (its YAML reading is the oracle)")
def test_every_tricky_resource_is_read_as_kubectl_sends_it(tmp_path: Path) -> None:
    mismatches: list[str] = []
    for i, (name, conf) in enumerate(RESOURCES.items()):
        root = _repo(tmp_path / f"r{i}", RESOURCE.format(conf=conf), "fd.yaml")
        expected = _operator_flat_map(_kubectl_json(root / "fd.yaml")["spec"]["flinkConfiguration"])
        deployment = _deployment(root)
        config = deployment["config"]
        ours = {k: e for k, e in config.items() if not e["default"] and e["file"] == "fd.yaml"}
        if set(ours) != set(expected):
            mismatches.append(f"{name}: the operator's keys {sorted(expected)} != streamwarden's {sorted(ours)}")
        for key, text in expected.items():
            entry = ours.get(key)
            if entry is None:
                continue
            option = BY_KEY.get(key)
            want: Any = text if option is None else option.parse(text)
            if entry["value"] != want:
                mismatches.append(f"{name}: {key}: the operator gets {text!r}, streamwarden reads {entry['value']!r}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (its YAML reading is the oracle)")
def test_a_resource_kubectl_cannot_send_is_unreadable(tmp_path: Path) -> None:
    for i, conf in enumerate(["    acme.limit: .inf\n", "    ~: 1\n"]):
        root = _repo(tmp_path / f"r{i}", RESOURCE.format(conf=conf), "fd.yaml")
        refused = subprocess.run(
            ["kubectl", "label", "--local", "-f", str(root / "fd.yaml"), "x=1", "-o", "json"],
            capture_output=True,
            env={**os.environ, "KUBECONFIG": os.devnull},
            check=False,
        )
        assert refused.returncode != 0
        [unreadable] = _deployment(root).get("unreadable") or [{}]
        assert "kubectl" in unreadable.get("error", ""), unreadable
