"""Recovery output for people: `gate --format markdown` and `evidence` (markdown) draw the
checkpoint ↔ snapshot timeline as a Mermaid block, every label escaped for Mermaid
(escape.mermaid_label); `--help` of both states the exit codes, failing closed and what the
environment must configure. Through the real CLI, on a table built like the Iceberg Flink sink's
(tests/recovery_repo.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.cli import Proc, sw
from tests.recovery_repo import RecoveryRepo

from streamwarden.core.escape import mermaid_label
from streamwarden.report.timeline import recovery_timeline

NODE = re.compile(r'^  (\w+)(\(\[|\[|\{\{)("[^"\n]*")(\]\)|\]|\}\})$')
EDGE = re.compile(r"^  (\w+) (-->|==>|-\.-|---|~~~) (\w+)$")
LABELLED_EDGE = re.compile(r'^  (\w+) (-- ("[^"\n]*") -->|-\. ("[^"\n]*") \.->) (\w+)$')
CLASS_DEF = re.compile(r"^  classDef \w+ [\w:#,.\- ]+$")
CLASS = re.compile(r"^  class [\w,]+ \w+$")
HOSTILE = [
    'x"] --> PWN["owned',
    "line one\nclick SP call alert(1)\n%%{init: {'securityLevel': 'loose'}}%%",
    "#quot; #35; &amp; <img src=x onerror=alert(1)> </script>",
    "`**md**` [link](https://evil.example) {{shape}} (round) |edge|",
    "```\n## heading\n::error::x\n##[error]y",
    "\x1b[31mred\x1b[0m \u202eevil\r\nnext",
    "é" * 500,
]


def mermaid_blocks(markdown: str) -> list[list[str]]:
    blocks = re.findall(r"^```mermaid\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL)
    return [b.rstrip("\n").split("\n") for b in blocks]


def check_label(quoted: str) -> str:
    """A label stays inside its quotes: nothing in it can end them, open a shape or an entity of
    its own; returns the text as Mermaid shows it (entities decoded, <br/> as a newline)."""
    assert quoted.startswith('"') and quoted.endswith('"') and quoted.count('"') == 2, quoted
    inner = quoted[1:-1]
    assert not re.search(r"[\[\]{}()|`\n\r\x1b]", inner), inner
    assert not re.search(r"<(?!br/>)|(?<!<br/)>", inner), inner
    assert re.sub(r"#\d+;", "", inner).count("#") == 0, inner
    assert "&" not in re.sub(r"#\d+;", "", inner), inner
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), inner.replace("<br/>", "\n"))


def parse(block: list[str]) -> tuple[dict[str, str], list[tuple[str, str, str]], dict[str, set[str]]]:
    """Nodes (id -> shown label), edges (from, kind, to) and classes of a generated flowchart;
    every line must be one of the forms the renderer writes."""
    assert block[0] == "flowchart LR"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    classes: dict[str, set[str]] = {}
    for line in block[1:]:
        if m := NODE.match(line):
            nodes[m.group(1)] = check_label(m.group(3))
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2), m.group(3)))
        elif m := LABELLED_EDGE.match(line):
            check_label(m.group(3) or m.group(4))
            edges.append((m.group(1), "labelled", m.group(5)))
        elif CLASS_DEF.match(line):
            pass
        elif CLASS.match(line):
            _, ids, name = line.split()
            classes.setdefault(name, set()).update(ids.split(","))
        else:
            raise AssertionError(f"unexpected Mermaid line: {line!r}")
    for a, _, b in edges:
        assert a in nodes and b in nodes, (a, b)
    return nodes, edges, classes


# --- the escaping function ------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", HOSTILE)
def test_mermaid_label_keeps_hostile_text_inside_its_quotes(hostile: str) -> None:
    quoted = mermaid_label(hostile, "second line")
    shown = check_label(quoted)
    first, second = shown.split("\n")
    assert second == "second line"
    assert len(first) <= 120
    if len(hostile) < 100 and "\x1b" not in hostile and "\u202e" not in hostile:
        assert first == " ".join(hostile.split())  # what the reader sees is the text itself


def test_mermaid_label_shows_controls_escaped_and_cuts_long_text() -> None:
    assert check_label(mermaid_label("\x1b[31m")) == "\\x1b[31m"
    long = check_label(mermaid_label("x" * 500))
    assert len(long) == 120 and long.endswith("…")
    assert mermaid_label("#35;") == '"#35;35;"'  # an entity in the input is shown, not decoded


# --- gate and evidence markdown on a known table -----------------------------------------------------


@pytest.fixture
def incident(tmp_path: Path) -> RecoveryRepo:
    """An append-only table the job committed checkpoints 1..20 into."""
    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 20)
    return r


def run(r: RecoveryRepo, command: str, *args: str) -> Proc:
    base = ["orders-enrichment", "--env", "prod", "--config", str(r.root / "streamwarden.yaml"), "--now", r.now_arg()]
    return sw(command, *base, *args, cwd=r.root)


def test_gate_markdown_draws_savepoint_match_replay_and_rollback_target(incident: RecoveryRepo) -> None:
    sp = incident.savepoint(12)
    p = run(incident, "gate", "--restore-from", str(sp), "--format", "markdown")
    assert p.code == 1, p
    md = p.stdout
    assert md.startswith("# Gate: DENY `orders-enrichment` in `prod`")
    assert "**Decision: DENY** (exit 1)" in md and "## Reasons" in md and "`SW-REC-002`" in md
    (block,) = mermaid_blocks(md)
    nodes, edges, classes = parse(block)
    c = incident.sink.committed
    assert nodes["SP"].startswith("savepoint of checkpoint 12\njob " + "a" * 32 + "\ncompleted ")
    assert nodes["M"].startswith(f"snapshot {c[12]}\ncommitted checkpoint 12\n")
    # 8 replayed commits: the first three, the run between, the last
    assert [nodes[f"R{i}"].split("\n")[:2] for i in (1, 2, 3)] == [
        [f"snapshot {c[n]}", f"checkpoint {n}"] for n in (13, 14, 15)
    ]
    assert nodes["R4"].startswith("… 4 more commits")
    assert nodes["R5"].split("\n")[:2] == [f"snapshot {c[20]}", "checkpoint 20"]
    assert all(nodes[f"R{i}"].endswith("replayed: rows written twice") for i in range(1, 6))
    assert nodes["T"] == f"rollback target: snapshot {c[12]}\nbefore restoring: the replay duplicates rows"
    assert ("SP", "labelled", "M") in edges and ("M", "labelled", "R1") in edges
    assert {("R1", "-->", "R2"), ("R4", "-->", "R5"), ("T", "==>", "M")} <= set(edges)
    assert classes["replay"] == {"R1", "R2", "R3", "R4", "R5"} and classes["target"] == {"T"}


def test_evidence_markdown_has_the_same_timeline(incident: RecoveryRepo) -> None:
    sp = str(incident.savepoint(12))
    evidence = run(incident, "evidence", "--restore-from", sp)
    gate = run(incident, "gate", "--restore-from", sp, "--format", "markdown")
    assert evidence.code == 0, evidence
    assert "## Timeline" in evidence.stdout
    assert mermaid_blocks(evidence.stdout) == mermaid_blocks(gate.stdout)


def test_a_short_replay_is_drawn_commit_by_commit_and_a_named_target_points_at_its_snapshot(
    incident: RecoveryRepo,
) -> None:
    c = incident.sink.committed
    p = run(incident, "gate", "--restore-from", str(incident.savepoint(17)), "--rollback-to", str(c[17]))
    assert p.code == 0, p  # the named target undoes the replay
    md = run(
        incident,
        "gate",
        "--restore-from",
        str(incident.savepoint(17)),
        "--rollback-to",
        str(c[17]),
        "--format",
        "markdown",
    ).stdout
    assert "**Decision: ALLOW** (exit 0)" in md
    nodes, edges, _ = parse(mermaid_blocks(md)[0])
    assert [nodes[f"R{i}"].split("\n")[1] for i in (1, 2, 3)] == ["checkpoint 18", "checkpoint 19", "checkpoint 20"]
    assert "R4" not in nodes
    assert nodes["T"] == f"rollback target --rollback-to {c[17]}\nsnapshot {c[17]} (snapshot id)\nvalid"
    assert ("T", "==>", "M") in edges


def test_a_current_savepoint_replays_nothing(incident: RecoveryRepo) -> None:
    md = run(incident, "gate", "--restore-from", str(incident.savepoint(20)), "--format", "markdown").stdout
    nodes, _, _ = parse(mermaid_blocks(md)[0])
    assert nodes["N"] == "nothing to replay\nmax committed checkpoint 20"
    assert "T" not in nodes and not any(n.startswith("R") for n in nodes)


def test_hostile_rollback_target_stays_inside_its_label(incident: RecoveryRepo) -> None:
    hostile = 'x"]) --> PWN["owned #quot; `code` <b>'
    md = run(
        incident,
        "gate",
        "--restore-from",
        str(incident.savepoint(12)),
        "--rollback-to",
        hostile,
        "--format",
        "markdown",
    ).stdout
    nodes, _, _ = parse(mermaid_blocks(md)[0])
    assert "PWN" not in nodes
    assert nodes["T"].startswith(f"rollback target --rollback-to {hostile}\n")
    assert "not usable" in nodes["T"]


def test_hostile_server_values_stay_inside_their_labels() -> None:
    """Job ids, reasons and snapshot data come from files and servers: each line is checked."""
    for hostile in HOSTILE:
        sp = {
            "available": True,
            "kind": hostile,
            "checkpoint_id": hostile,
            "job_id": hostile,
            "completed_ms": 10**30,
            "table": {
                "status": "behind",
                "behind": True,
                "matching_snapshot": {"snapshot_id": hostile, "checkpoint_id": hostile, "timestamp_ms": "x"},
                "replay": {"snapshots": 2, "snapshot_ids": [hostile, hostile], "checkpoints": [hostile, hostile]},
                "discarded_by_rollback": {"other_writers": [{}]},
                "rollback_target": {
                    "named": hostile,
                    "via": hostile,
                    "snapshot_id": hostile,
                    "valid": False,
                    "reason": hostile,
                },
                "max_committed_checkpoint_id": hostile,
            },
        }
        lines = recovery_timeline(sp, duplicates=True)
        assert lines[0] == "```mermaid" and lines[-1] == "```"
        nodes, _, _ = parse(lines[1:-1])
        assert {"SP", "M", "R1", "R2", "O", "T"} <= set(nodes)
        unknown = {**sp, "table": {"status": "unknown", "reason": hostile}}
        nodes, _, _ = parse(recovery_timeline(unknown, duplicates=False)[1:-1])
        assert set(nodes) == {"SP", "U"}


def test_no_savepoint_draws_no_timeline(incident: RecoveryRepo) -> None:
    p = run(incident, "gate", "--format", "markdown")
    assert p.code == 1 and "```mermaid" not in p.stdout
    assert "None given (`--restore-from`)" in p.stdout and "`SW-REC-003`" in p.stdout
    assert "| iceberg | yes | yes |" in p.stdout and "| flink | no | not configured |" in p.stdout


def test_text_and_json_have_no_mermaid(incident: RecoveryRepo) -> None:
    sp = str(incident.savepoint(12))
    for fmt in ("text", "json"):
        assert "mermaid" not in run(incident, "gate", "--restore-from", sp, "--format", fmt).stdout
    assert "mermaid" not in run(incident, "evidence", "--restore-from", sp, "--format", "json").stdout


# --- help ------------------------------------------------------------------------------------------


def test_gate_help_states_exit_codes_fail_closed_and_environment(tmp_path: Path) -> None:
    out = " ".join(sw("gate", "--help", cwd=tmp_path).stdout.split())
    assert "Exit codes: 0 allow; 1 deny" in out and "2 unusable input" in out
    assert "fails closed" in out
    assert "must configure iceberg" in out and "flink (REST) is optional" in out
    assert "[text|json|markdown]" in out


def test_evidence_help_states_exit_codes_fail_closed_and_environment(tmp_path: Path) -> None:
    out = " ".join(sw("evidence", "--help", cwd=tmp_path).stdout.split())
    assert "Exit codes: 0 the record was written, whatever its verdict" in out and "2 unusable input" in out
    assert "fails closed" in out and "must configure iceberg" in out and "Mermaid" in out
