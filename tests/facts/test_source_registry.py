"""Adding a source is one module and one registry line: a source registered from outside the
package (a module in the test's directory, facts/registry.py's ``registered``) has its section in
the document ``facts`` prints, in what ``check --env`` evaluates (a custom rule on it fires) and
in the gate's list of sources, through the real CLI in a subprocess. Nothing else of streamwarden
names it: the one gathering pipeline (facts/pipeline.py) calls it as it calls the built-in ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli import Proc
from tests.conftest import CLEAN_CONTRACT, NOW

LEDGER_SOURCE = '''
"""An incident ledger: open incidents per pipeline, from ledger.json in the repository root."""

import json


class LedgerSource:
    name = "ledger"
    section = None
    extra = None
    phase = "ledger: reading open incidents"
    recovery = True

    def needed(self, contract, env):
        return True

    def modules(self, contract, env):
        return ()

    def gather(self, subjects, env, ctx):
        from streamwarden.facts.source import available

        ledger = json.loads((ctx.root / "ledger.json").read_text(encoding="utf-8"))
        return [available(open_incidents=ledger.get(s.data["metadata"]["name"], 0)) for s in subjects]
'''

RUN = """
import sys
from streamwarden.cli import main
from streamwarden.facts import registry

with registry.registered("ledger", "ledger_source", "LedgerSource"):
    main(sys.argv[1:], prog_name="streamwarden")
"""

POLICY = """package acme.ledger

import rego.v1

# METADATA
# title: No deploy while incidents are open
# custom:
#   id: ACME-LEDGER-001
#   severity: error
deny contains f if {
	input.facts.ledger.available
	input.facts.ledger.open_incidents > 0
	f := {"rule": "ACME-LEDGER-001", "message": "open incidents", "path": "metadata.name"}
}
"""


def _repo(root: Path) -> Path:
    (root / "contracts").mkdir(parents=True)
    (root / "contracts" / "orders.yaml").write_text(CLEAN_CONTRACT, encoding="utf-8")
    (root / "streamwarden.yaml").write_text(
        'contracts: ["contracts/*.yaml"]\nenvironments:\n  prod: {}\n', encoding="utf-8"
    )
    (root / "ledger.json").write_text(json.dumps({"orders-enrichment": 2}), encoding="utf-8")
    (root / "acme").mkdir()
    (root / "acme" / "ledger.rego").write_text(POLICY, encoding="utf-8")
    plugin = root / "plugin"
    plugin.mkdir()
    (plugin / "ledger_source.py").write_text(LEDGER_SOURCE, encoding="utf-8")
    (plugin / "run.py").write_text(textwrap.dedent(RUN), encoding="utf-8")
    return plugin


def _sw(plugin: Path, *args: str, cwd: Path) -> Proc:
    """The CLI's own entry point (streamwarden.cli.main) with the test source registered."""
    # the test source's section is in no published schema: self-check mode would refuse the document
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(plugin), "STREAMWARDEN_SELF_CHECK": "0"}
    proc = subprocess.run(
        [sys.executable, str(plugin / "run.py"), *args], cwd=cwd, env=env, capture_output=True, timeout=120, check=False
    )
    out = Proc(proc)
    assert "Traceback" not in out.output, out
    return out


def test_a_registered_source_is_in_the_facts_document_with_an_environment(tmp_path: Path) -> None:
    plugin = _repo(tmp_path)
    live = _sw(plugin, "facts", "orders-enrichment", "--env", "prod", "--now", NOW, cwd=tmp_path)
    assert live.code == 0, live
    facts = live.json()["facts"]
    assert facts["ledger"] == {"available": True, "configured": True, "open_incidents": 2}
    assert list(facts)[:7] == ["deployment", "flink", "iceberg", "data", "savepoint", "kafka", "ledger"]
    static = _sw(plugin, "facts", "orders-enrichment", "--now", NOW, cwd=tmp_path)
    assert static.code == 0, static
    assert static.json()["facts"]["ledger"] == {"available": False, "configured": False}  # a live source


def test_a_rule_on_a_registered_source_fires_in_check_env_and_the_gate_lists_it(tmp_path: Path) -> None:
    plugin = _repo(tmp_path)
    check = _sw(plugin, "check", "--env", "prod", "--policy", "acme", "--format", "json", "--now", NOW, cwd=tmp_path)
    assert check.code == 1, check
    rules = {f["rule"] for f in check.json()["findings"]}
    assert "ACME-LEDGER-001" in rules
    static = _sw(plugin, "check", "--policy", "acme", "--format", "json", "--now", NOW, cwd=tmp_path)
    assert "ACME-LEDGER-001" not in {f["rule"] for f in static.json()["findings"]}

    gate = _sw(
        plugin,
        "gate",
        "orders-enrichment",
        "--env",
        "prod",
        "--policy",
        "acme",
        "--format",
        "json",
        "--now",
        NOW,
        cwd=tmp_path,
    )
    assert gate.code == 1, gate
    decision = gate.json()
    assert decision["sources"]["ledger"] == {"configured": True, "available": True}
    assert "ACME-LEDGER-001" in {r["rule"] for r in decision["reasons"]}
