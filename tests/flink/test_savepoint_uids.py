"""uid -> OperatorID as Flink's StreamGraphHasherV2 derives it, and the uids a contract declares."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from streamwarden.flink.uids import (
    closest_uid,
    declared_uids,
    edit_distance,
    is_operator_id,
    murmur3_x64_128,
    operator_id,
)

# Computed by Guava's Hashing.murmur3_128(0).putString(uid, UTF-8) inside flink-dist 2.3.0 (shaded
# guava33) and printed with OperatorID.toString().
GUAVA_VECTORS = {
    "src-uid": "65eb651c08e51afc6b01b9ec8c609cba",
    "counter": "0da08f51eaa85fc298e176a139b3649a",
    "orders-dedup": "04f0bc5ad44a2bf4b73330ee08fb0d5e",
    "orders-source": "45b0254a46cabbc3efeea5d2e170ea5b",
    "": "00000000000000000000000000000000",
    "a": "897859f6655555855a890e51483ab5e6",
    "0123456789abcde": "5123bfc0f6d52da6f04c547c0cf5cc4f",  # 15 bytes: tail only
    "0123456789abcdef": "a7d14acf946de04bda08a7635c5bc387",  # one full block
    "0123456789abcdef0": "75c0a58587ae24ebca283131b368fb73",  # block + 1-byte tail
    "héllo wörld ✓ 🚀": "60e028b9a1828fcb312cb0f03dab3c15",  # multi-byte UTF-8
    "Sink Committer: orders-iceberg-sink": "6d5ec415378eca4ea1e62da9a5adeac8",
    "orders-iceberg-sink-committer": "ab5d41f37b3b208f2857d54bf3e6c571",
    "x" * 100: "e26a598802e50404c37caf2e4057afde",
    "\ud800lone": "2b2f616bf0ec28aed5526cb8105e93d8",  # a lone surrogate: Java writes '?'
}


@pytest.mark.parametrize(("uid", "expected"), GUAVA_VECTORS.items())
def test_operator_id_matches_guava_murmur3_as_flink_uses_it(uid: str, expected: str) -> None:
    assert operator_id(uid) == expected


def test_hash_bytes_are_h1_then_h2_little_endian_printed_in_order() -> None:
    raw = murmur3_x64_128(b"counter")
    assert raw.hex() == "0da08f51eaa85fc298e176a139b3649a"
    assert len(raw) == 16


def test_operator_id_shape() -> None:
    assert is_operator_id("0DA08F51EAA85FC298E176A139B3649A")
    assert not is_operator_id("0da08f51")
    assert not is_operator_id("zz" * 16)


def test_declared_uids_cover_operators_restores_from_sources_sinks_and_sink_derivations() -> None:
    contract = {
        "state": {
            "operators": [{"uid": "orders-dedup"}, {"uid": "enrich", "restores_from": "enrich-old"}, {"kind": "keyed"}]
        },
        "job": {"sources": [{"uid": "orders-source"}], "sinks": [{"uid": "orders-sink"}, {"name": "no-uid"}]},
    }
    got = {(d.uid, d.path, d.derived) for d in declared_uids(contract)}
    assert ("orders-dedup", "state.operators[0].uid", None) in got
    assert ("enrich-old", "state.operators[1].restores_from", None) in got
    assert ("orders-source", "job.sources[0].uid", None) in got
    assert ("orders-sink", "job.sinks[0].uid", None) in got
    assert ("orders-sink-committer", "job.sinks[0].uid", "Iceberg FlinkSink committer (uidPrefix)") in got
    assert ("Sink Committer: orders-sink", "job.sinks[0].uid", "Sink V2 committer") in got
    by_uid = {d.uid: d.operator_id for d in declared_uids(contract)}
    assert by_uid["orders-dedup"] == GUAVA_VECTORS["orders-dedup"]


def test_restores_from_given_as_a_uid_hash_stands_for_itself() -> None:
    contract = {"state": {"operators": [{"uid": "new", "restores_from": "0DA08F51EAA85FC298E176A139B3649A"}]}}
    restored = [d for d in declared_uids(contract) if d.path.endswith("restores_from")]
    assert restored[0].operator_id == "0da08f51eaa85fc298e176a139b3649a"


def test_declared_uids_tolerate_malformed_sections() -> None:
    assert declared_uids({"state": "x", "job": {"sinks": "y"}}) == []


def test_closest_uid_by_edit_distance() -> None:
    assert edit_distance("orders-dedup", "orders-dedupe") == 1
    assert edit_distance("", "abc") == 3
    assert closest_uid("orders-dedupe", ["orders-source", "orders-dedup"]) == ("orders-dedup", 1)
    assert closest_uid("x", []) is None


def _flink_dist() -> list[Path]:
    """flink-dist from the Flink test venv, wherever tests/flink_cluster.py installed it."""
    from tests.flink_cluster import flink_home, venv_dir

    home = flink_home(venv_dir())
    return sorted(home.glob("lib/flink-dist-*.jar")) if home is not None else []


FLINK_DIST = _flink_dist()


@pytest.mark.skipif(
    not FLINK_DIST or not shutil.which("javac"), reason="needs javac and flink-dist from the Flink test venv"
)
def test_hashing_agrees_with_flinks_own_guava_on_fresh_uids(tmp_path: Path) -> None:
    uids = ["orders-enrich-join", "Sink pre-commit aggregator: sales.orders", "ünïcödé-ops", "q" * 33]
    src = tmp_path / "H.java"
    args = ", ".join('"' + u.replace('"', '\\"') + '"' for u in uids)
    src.write_text(
        "import org.apache.flink.shaded.guava33.com.google.common.hash.Hashing;\n"
        "import org.apache.flink.runtime.jobgraph.OperatorID;\n"
        "public class H { public static void main(String[] a) throws Exception {\n"
        '  System.setOut(new java.io.PrintStream(System.out, true, "UTF-8"));\n'
        f"  for (String u : new String[]{{{args}}}) System.out.println(new OperatorID(Hashing.murmur3_128(0)"
        ".newHasher().putString(u, java.nio.charset.StandardCharsets.UTF_8).hash().asBytes()));\n}}\n",
        encoding="utf-8",
    )
    jar = str(FLINK_DIST[-1])
    subprocess.run(["javac", "-encoding", "UTF-8", "-cp", jar, str(src)], check=True, capture_output=True, timeout=120)
    out = subprocess.run(
        ["java", "-cp", f"{jar}:{tmp_path}", "H"], check=True, capture_output=True, text=True, timeout=120
    )
    assert out.stdout.split() == [operator_id(u) for u in uids]
