"""Consumer notices: `evidence --format notices|notices-json`, and `evidence --notify` posting each
consumer's notice to the `notify:` webhook targets of streamwarden.yaml, through the installed
command against a loopback receiver (real HTTP on 127.0.0.1) on real Iceberg tables."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli import Proc, sw
from tests.recovery_repo import RecoveryRepo

TOKEN = "nt0ken-Zq8v3KfP1x9W-s3cr3t"
# a contract refuses control characters; what it may hold is still a command, markup or a mention
HOSTILE_NAME = "::error::pwned"
HOSTILE_CONTACT = "::warning::x ##[error]y <img src=x onerror=alert(1)> [docs](https://evil.example) @admins"
# a server's answer may hold anything
HOSTILE_ANSWER = b"\x1b]8;;https://evil.example\x07link\x1b[2J\n::error::from-server ##[error]z"


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (the timeout and size cases) closes its socket: not an error here."""
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            super().handle_error(request, client_address)


class Receiver:
    """A webhook receiver on 127.0.0.1: records each request (path, headers, body) and answers as
    ``mode`` says: ok (200), redirect (302 to another path of itself), huge (an endless 200 body
    without Content-Length), declared (announces 100 MiB), drip (a byte every half second), slow
    (answers only when closed), echo500 (500 quoting the
    Authorization header it got), hostile500 (500 with terminal escapes and workflow commands)."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.seen: list[tuple[str, dict[str, str], bytes]] = []
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.seen.append((self.path, dict(self.headers.items()), body))
                mode = receiver.mode
                if mode == "slow":
                    receiver.release.wait(60)
                    return
                if mode == "redirect":
                    self.send_response(302)
                    self.send_header("Location", "/elsewhere")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if mode == "declared":  # announces 100 MiB, sends a little
                    self.send_response(200)
                    self.send_header("Content-Length", str(100 * 1024 * 1024))
                    self.end_headers()
                    self.wfile.write(b"x" * 1024)
                    return
                if mode == "drip":  # one byte every half second: each read is quick, the whole is not
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    for _ in range(1000):
                        if receiver.release.wait(0.5):
                            return
                        self.wfile.write(b"x")
                        self.wfile.flush()
                    return
                if mode == "huge":
                    self.send_response(200)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    chunk = b"x" * (1024 * 1024)
                    for _ in range(200):  # up to 200 MiB, until the client hangs up
                        self.wfile.write(chunk)
                    return
                status, answer = {
                    "echo500": (500, f"rejected {self.headers.get('Authorization')}".encode()),
                    "hostile500": (500, HOSTILE_ANSWER),
                }.get(mode, (200, b'{"ok": true}'))
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = _Quiet(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/streamwarden"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def incident(tmp_path: Path) -> RecoveryRepo:
    """Checkpoints 1..20 committed into an append-only table; restored from checkpoint 12."""
    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 20)
    return r


def _configure(repo: RecoveryRepo, targets: list[dict[str, Any]]) -> None:
    path = repo.root / "streamwarden.yaml"
    config = yaml.safe_load(path.read_text())
    config["notify"] = targets
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def _consumers(repo: RecoveryRepo, extra: str) -> None:
    """More consumers after finance-dashboard (YAML lines, indented as the list's items)."""
    repo.edit_contract('      contact: "#finance-data"\n', '      contact: "#finance-data"\n' + extra)


def _evidence(repo: RecoveryRepo, *args: str, env: dict[str, str] | None = None) -> Proc:
    return sw(
        "evidence",
        "orders-enrichment",
        "--env",
        "prod",
        "--config",
        str(repo.root / "streamwarden.yaml"),
        "--now",
        repo.now_arg(),
        "--restore-from",
        str(repo.savepoint(12)),
        *args,
        cwd=repo.root,
        env=env,
    )


def _target(url: str, contacts: list[str], **more: Any) -> dict[str, Any]:
    return {"name": "data-platform", "url": url, "contacts": contacts, "token_env": "NOTIFY_TOKEN", **more}


# -- the notices ------------------------------------------------------------------------------


def test_notice_json_says_what_happened_what_to_trust_and_what_to_do(incident: RecoveryRepo) -> None:
    p = _evidence(incident, "--format", "notices-json")
    assert p.code == 0, p
    doc = p.json()
    committed = incident.sink.committed
    [notice] = doc["notices"]
    assert notice["consumer"] == {"name": "finance-dashboard", "contact": "#finance-data", "freshness_ms": 1_800_000}
    happened = notice["happened"]
    assert happened["restore"]["checkpoint_id"] == 12
    assert happened["replay"]["checkpoints"] == list(range(13, 21))
    window = happened["duplicate_window"]
    assert window["snapshot_ids"] == [committed[c] for c in range(13, 21)]
    table = incident.lake.table()
    times = {s.snapshot_id: s.timestamp_ms for s in table.snapshots()}
    assert (window["first_snapshot_id"], window["first_ms"]) == (committed[13], times[committed[13]])
    assert (window["last_snapshot_id"], window["last_ms"]) == (committed[20], times[committed[20]])
    assert happened["rollback"]["snapshot_id"] == committed[12] and happened["rollback"]["needed"] is True
    assert notice["trust"]["snapshot_id"] == committed[12]
    assert notice["trust"]["timestamp_ms"] == times[committed[12]]
    fresh = notice["freshness"]
    assert fresh["promised_ms"] == 1_800_000
    assert fresh["lost_ms"] == times[committed[20]] - times[committed[12]]
    assert fresh["lag_ms"] == incident.now_ms - times[committed[12]]
    assert fresh["over_promise_ms"] == max(0, fresh["lag_ms"] - 1_800_000)
    action = notice["action"]
    assert action["kind"] == "reread" and action["snapshot_ids"] == window["snapshot_ids"]
    assert f"snapshots {committed[13]}..{committed[20]}" in action["text"]
    assert f"snapshot {committed[12]}" in action["text"]
    assert doc["notify"] is None and doc["notified"] == []
    # the full record carries the same notices
    record = _evidence(incident, "--format", "json").json()
    assert record["notices"] == doc["notices"]


def test_notice_markdown_for_people(incident: RecoveryRepo) -> None:
    p = _evidence(incident, "--format", "notices")
    assert p.code == 0, p
    md = p.stdout
    committed = incident.sink.committed
    assert md.startswith("# Notices: orders-enrichment in prod")
    assert "## finance-dashboard: #finance-data" in md
    assert "- replayed checkpoints: 13..20 (8 commits, 16 records)" in md
    assert f"- duplicate window: snapshots `{committed[13]}` (" in md and f"`{committed[20]}` (" in md
    assert f"- **State to trust:** snapshot `{committed[12]}` (" in md
    assert "- **Freshness:** promised 30m;" in md
    assert "- **What to do (reread):**" in md


def test_idempotent_sink_notice_says_dedupe_on_the_key(tmp_path: Path) -> None:
    r = RecoveryRepo(tmp_path, upsert=True)
    r.commit(1, 20)
    [notice] = _evidence(r, "--format", "notices-json").json()["notices"]
    assert notice["happened"]["duplicates"] is False and notice["happened"]["duplicate_window"] is None
    assert notice["action"]["kind"] == "dedupe" and notice["action"]["key"] == ["order_id"]
    assert "dedupe on key order_id" in notice["action"]["text"]


def test_nothing_replayed_means_no_action_and_the_head_to_trust(tmp_path: Path) -> None:
    r = RecoveryRepo(tmp_path, upsert=False)
    r.commit(1, 12)
    [notice] = _evidence(r, "--format", "notices-json").json()["notices"]
    assert notice["happened"]["replay"]["checkpoints"] == []
    assert notice["trust"]["snapshot_id"] == r.sink.committed[12]
    assert notice["action"]["kind"] == "none" and "No action needed" in notice["action"]["text"]
    assert notice["freshness"]["lost_ms"] == 0


# -- --notify ---------------------------------------------------------------------------------


def test_notices_reach_the_receiver_with_the_bearer_token(incident: RecoveryRepo, receiver: Receiver) -> None:
    _configure(incident, [_target(receiver.url, ["#FINANCE-*"])])
    p = _evidence(incident, "--notify", "--format", "json", env={"NOTIFY_TOKEN": TOKEN})
    assert p.code == 0, p
    doc = p.json()
    [(path, headers, body)] = receiver.seen
    assert path == "/hooks/streamwarden"
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == doc["notices"][0]
    assert headers["Idempotency-Key"] == doc["notices"][0]["id"]
    assert doc["notified"] == ["finance-dashboard"]
    assert doc["notify"]["deliveries"] == [
        {
            "consumer": "finance-dashboard",
            "target": "data-platform",
            "delivered": True,
            "status": 200,
            "kind": None,
            "error": None,
        }
    ]
    assert "1 of 1 consumers told" in p.stderr
    assert TOKEN not in p.output


def test_consumers_no_target_serves_are_listed_as_not_told(incident: RecoveryRepo, receiver: Receiver) -> None:
    _consumers(
        incident,
        "    - name: ml-features\n      contact: ml@team.example\n"
        "    - name: audit\n      contact: audit@corp.example\n"
        "    - name: adhoc\n",
    )
    _configure(incident, [_target(receiver.url, ["#finance-data", "*@TEAM.example"])])
    p = _evidence(incident, "--notify", "--format", "notices-json", env={"NOTIFY_TOKEN": TOKEN})
    assert p.code == 0, p
    doc = p.json()
    assert sorted(json.loads(b)["consumer"]["name"] for _, _, b in receiver.seen) == [
        "finance-dashboard",
        "ml-features",
    ]
    assert doc["notified"] == ["finance-dashboard", "ml-features"]
    assert doc["notify"]["not_told"] == [
        {"name": "audit", "contact": "audit@corp.example", "reason": "no notify target serves this contact"},
        {"name": "adhoc", "contact": None, "reason": "no contact"},
    ]
    assert "consumer audit (audit@corp.example) was not told: no notify target serves this contact" in p.stderr
    assert "2 of 4 consumers told" in p.stderr
    md = _evidence(incident, "--notify", "--format", "notices", env={"NOTIFY_TOKEN": TOKEN}).stdout
    assert "- audit (audit@\u200bcorp.example): **not told**, no notify target serves this contact" in md


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


@pytest.mark.parametrize(
    ("mode", "kind", "said"),
    [
        ("down", "unreachable", "cannot reach notify target 'data-platform'"),
        ("slow", "timeout", "no whole answer from notify target 'data-platform'"),
        ("huge", "too_large", "with more than 64 KiB; refused to read it"),
        ("declared", "too_large", "with more than 64 KiB; refused to read it"),
        ("drip", "timeout", "no whole answer from notify target 'data-platform' (http://127.0.0.1:"),
        ("redirect", "redirect", "answered HTTP 302, a redirect; redirects are not followed"),
        ("echo500", "http", "answered HTTP 500: rejected Bearer ***"),
    ],
)
def test_a_post_that_fails_is_bounded_and_reported(incident: RecoveryRepo, mode: str, kind: str, said: str) -> None:
    receiver = Receiver(mode)
    try:
        url = _closed_port_url() if mode == "down" else receiver.url
        _configure(incident, [_target(url, ["#finance-data"], timeout="2s")])
        p = _evidence(incident, "--notify", "--format", "json", env={"NOTIFY_TOKEN": TOKEN})
        assert p.code == 1, p  # the record is written, the failure fails the command
        doc = p.json()
        [delivery] = doc["notify"]["deliveries"]
        assert delivery["delivered"] is False and delivery["kind"] == kind, delivery
        assert said in delivery["error"]
        assert doc["notified"] == [] and doc["notify"]["failed"] is True
        assert "the notice to consumer finance-dashboard was not delivered" in p.stderr and said in p.stderr
        assert TOKEN not in p.output and TOKEN[:9] not in p.output
        if mode == "redirect":
            assert [path for path, _, _ in receiver.seen] == ["/hooks/streamwarden"]  # not followed
    finally:
        receiver.close()


def test_one_target_down_does_not_stop_the_others(incident: RecoveryRepo, receiver: Receiver) -> None:
    _configure(
        incident,
        [
            {"name": "broken", "url": _closed_port_url(), "contacts": ["#finance-data"]},
            {"name": "works", "url": receiver.url, "contacts": ["#finance-data"]},
        ],
    )
    p = _evidence(incident, "--notify", "--format", "notices-json")
    assert p.code == 1, p
    doc = p.json()
    assert [(d["target"], d["delivered"]) for d in doc["notify"]["deliveries"]] == [("broken", False), ("works", True)]
    assert doc["notified"] == ["finance-dashboard"]  # told through the target that works
    assert "Authorization" not in receiver.seen[0][1]  # no token_env: no token sent


def test_unset_token_variable_exits_2_and_posts_nothing(incident: RecoveryRepo, receiver: Receiver) -> None:
    _configure(incident, [_target(receiver.url, ["#finance-data"])])
    p = _evidence(incident, "--notify", env={"NOTIFY_TOKEN": ""})
    assert p.code == 2, p
    assert "notify target 'data-platform': the environment variable NOTIFY_TOKEN is not set" in p.stderr
    assert "streamwarden.yaml:" in p.stderr and "notify[0].token_env" in p.stderr
    assert receiver.seen == [] and p.stdout == ""


def test_notify_without_targets_exits_2(incident: RecoveryRepo) -> None:
    p = _evidence(incident, "--notify")
    assert p.code == 2 and "--notify needs webhook targets: streamwarden.yaml has no `notify:`" in p.stderr, p


@pytest.mark.parametrize(
    ("target", "said", "where"),
    [
        (
            {"name": "x", "url": "https://user:pw@hooks.example/x", "contacts": ["a"]},
            "notify[0].url",
            "notify[0].url",
        ),
        ({"name": "x", "url": "ftp://hooks.example/x", "contacts": ["a"]}, "notify[0].url", "notify[0].url"),
        ({"name": "x", "url": "https://hooks.example/x", "contacts": []}, "notify[0].contacts", "notify[0].contacts"),
        ({"name": "x", "url": "https://hooks.example/x", "contacts": ["a"], "host": "h"}, "host", "notify[0]"),
        (
            {"name": "x", "url": "https://hooks.example/x", "contacts": ["a"], "timeout": "0s"},
            "a timeout of 0 lets no post finish",
            "notify[0].timeout",
        ),
    ],
)
def test_bad_notify_configuration_exits_2_with_where(
    incident: RecoveryRepo, target: dict[str, Any], said: str, where: str
) -> None:
    _configure(incident, [target])
    p = _evidence(incident, "--format", "notices")
    assert p.code == 2, p
    assert said in p.stderr and where in p.stderr and "streamwarden.yaml:" in p.stderr


def test_two_targets_with_one_name_exit_2(incident: RecoveryRepo) -> None:
    t = {"name": "x", "url": "https://hooks.example/x", "contacts": ["a"]}
    _configure(incident, [t, dict(t)])
    p = _evidence(incident)
    assert p.code == 2 and "two notify targets are named 'x'" in p.stderr and "notify[1].name" in p.stderr, p


def test_token_in_the_url_path_is_never_shown(incident: RecoveryRepo) -> None:
    """A Slack-style webhook URL carries its secret in the path: errors show it masked."""
    secret = "T0KEN5ecretPathSegment42xyz"
    _configure(incident, [{"name": "slack", "url": _closed_port_url() + "/" + secret, "contacts": ["#finance-data"]}])
    p = _evidence(incident, "--notify", "--format", "json")
    assert p.code == 1, p
    assert secret not in p.output and secret[:9] not in p.output
    assert "***" in p.json()["notify"]["deliveries"][0]["error"]


def test_hostile_consumer_names_contacts_and_answers_stay_inert(incident: RecoveryRepo) -> None:
    _consumers(incident, f"    - name: {json.dumps(HOSTILE_NAME)}\n      contact: {json.dumps(HOSTILE_CONTACT)}\n")
    md = _evidence(incident, "--format", "notices")
    assert md.code == 0, md
    receiver = Receiver("hostile500")
    try:
        _configure(incident, [_target(receiver.url, ["#finance-data"])])
        told = _evidence(incident, "--notify", "--format", "notices", env={"NOTIFY_TOKEN": TOKEN})
    finally:
        receiver.close()
    assert told.code == 1, told
    for out in (md.stdout, told.stdout, told.stderr):
        assert "\x1b" not in out and "\x07" not in out
        assert not any(line.lstrip().startswith("::") for line in out.split("\n")), out
        assert "##[" not in out
    for out in (md.stdout, told.stdout):  # Markdown: no HTML, no link, no mention
        assert "<img" not in out and "](https://" not in out and "@admins" not in out
    assert "## \u200b::error::pwned: \u200b::warning::x" in md.stdout  # shown, inert
    assert "\\x1b]8;;https" in told.stderr or "\\x1b]8;;https" in told.stdout  # the server's escape, shown
    assert "consumer \u200b::error::pwned (\u200b::warning::x" in told.stderr  # said, inert
    data = _evidence(incident, "--format", "notices-json").json()  # JSON keeps the value as written
    assert data["notices"][1]["consumer"] == {"name": HOSTILE_NAME, "contact": HOSTILE_CONTACT, "freshness_ms": None}
