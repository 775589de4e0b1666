"""A hostile pull request against `check --base main --env local` on the example lake: the
contracts come from the pull request, the environment (catalogs, access settings, credentials)
from the trusted ref. Each test runs the real CLI in a git repository shaped like a pull request
over a copy of contracts/examples whose lake scripts/make_example_lake.py built.

1. a contract reads only the tables the environment grants it (without an allow list, in a pull
   request: the table its base version reads), SW-FACT-002 otherwise, with no facts of the table;
   data findings give counts, not row values, unless the environment shows them;
2. a decoy contract on another pipeline's table cannot hide that pipeline's duplicates through
   the state file (one watermark per contract and rule set; a pull request never writes it);
3. table.catalog names only a catalog the environment configures (PyIceberg's own configuration
   is opt-in per environment);
4. the contracts on one table share one scan, and a run's scans stay within the environment's
   budget (SW-FACT-001 names it).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.test_example_lake import EXAMPLES, java_available, load_script
from tests.cli import Proc, sw
from tests.gitrepo import Repo

PLAIN_CONFIG = (EXAMPLES / "streamwarden.yaml").read_text(encoding="utf-8")

DECOY = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {name: aaa-decoy, owner: growth-tools, description: "A harmless freshness check."}
job: {name: aaa-decoy}
table: {catalog: lake, identifier: finance.payments}
quality:
  freshness: {column: updated_at, max_lag: 30d}
"""

THIEF = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {name: aab-thief, owner: payments-data, description: "Claims another team's owner."}
job: {name: aab-thief}
table: {catalog: lake, identifier: sales.orders}
quality:
  unique: [customer_id]
"""

SHADOW = """\
apiVersion: streamwarden/v1
kind: PipelineContract
metadata: {name: zz-shadow, owner: web-analytics}
job: {name: zz-shadow}
table:
  catalog: shadow
  identifier: hr.salaries
  schema:
    - {name: nothing_here, type: string, id: 99}
"""

ALLOW_CONFIG = """\
contracts: ["**/contract.yaml"]
fail_on: error
environments:
  local:
    iceberg:
      catalogs:
        lake: {type: sql, uri: "sqlite:///.lake/catalog.db", warehouse: ".lake/warehouse"}
      allow:
        - {catalog: lake, namespace: web, owners: [web-analytics]}
        - {catalog: lake, namespace: sales, owners: [payments-data]}
        - {catalog: lake, table: finance.payments}
      data:
        scan_budget: {files: BUDGET}
    spark:
      master: "local[2]"
      conf: {spark.driver.memory: 512m, spark.sql.session.timeZone: UTC, spark.ui.enabled: "false"}
  withpy:
    iceberg:
      catalogs:
        lake: {type: sql, uri: "sqlite:///.lake/catalog.db", warehouse: ".lake/warehouse"}
      use_pyiceberg_config: true
"""


def _hostile_clickstream(text: str) -> str:
    """clickstream-sessions (owner web-analytics) pointed at another team's table, with a
    uniqueness promise on a column that repeats there and the other table's time column."""
    out = text.replace("identifier: web.sessions", "identifier: sales.orders")
    out = out.replace("unique: [session_id]", "unique: [customer_id]")
    out = out.replace("freshness: {column: session_end, max_lag: 10m}", "freshness: {column: updated_at, max_lag: 10m}")
    assert out.count("sales.orders") == 1 and "customer_id" in out
    return out


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example lake in a git repository: main holds the examples as they are (the trusted
    ref), `pr` the hostile pull request; `trusted2` adds an allow list and a scan budget to the
    configuration, `pr2` the same hostile changes on top of it. A second SQLite catalog, `shadow`,
    exists only in PyIceberg's own configuration (PYICEBERG_CATALOG__SHADOW__*)."""
    if not java_available():
        pytest.skip("Java is not installed: the example check needs a local Spark session (install a JDK 17)")
    top = tmp_path_factory.mktemp("live-access")
    root = top / "repo"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".lake"))
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert load_script().main(["--root", str(root), "--now", now]) == 0
    shadow_env = _shadow_catalog(top)
    repo = Repo(root)
    repo.write(".gitignore", ".lake/\n*.json\n")
    repo.commit("base: the example pipelines")
    repo.branch("pr")
    clickstream = root / "clickstream-sessions" / "contract.yaml"
    repo.write("clickstream-sessions/contract.yaml", _hostile_clickstream(clickstream.read_text(encoding="utf-8")))
    repo.write("aaa-decoy/contract.yaml", DECOY)
    repo.write("aab-thief/contract.yaml", THIEF)
    repo.write("zz-shadow/contract.yaml", SHADOW)
    repo.commit("a hostile pull request")
    repo.checkout("main")
    repo.branch("trusted2")
    repo.write("streamwarden.yaml", ALLOW_CONFIG.replace("BUDGET", str(_payments_files(root))))
    repo.commit("trusted: grants and a scan budget")
    repo.branch("pr2")
    repo.git("checkout", "-q", "pr", "--", ".")
    repo.write("streamwarden.yaml", ALLOW_CONFIG.replace("BUDGET", str(_payments_files(root))))
    repo.commit("the same hostile pull request, on the trusted configuration with grants")
    repo.branch("pr3")
    loosened = ALLOW_CONFIG.replace("BUDGET", "1000000").replace(
        "        - {catalog: lake, table: finance.payments}\n",
        "        - {catalog: lake, table: finance.payments}\n        - {catalog: lake, namespace: sales}\n",
    )
    loosened = loosened.replace(
        "      data:\n", "      use_pyiceberg_config: true\n      data:\n        show_values: true\n"
    )
    assert "namespace: sales}" in loosened and "show_values: true" in loosened
    repo.write("streamwarden.yaml", loosened)
    repo.commit("the pull request also grants itself sales.*, any catalog, and row values")
    repo.checkout("pr")
    return {"repo": repo, "root": root, "now": now, "shadow_env": shadow_env}


def _payments_files(root: Path) -> int:
    """Files one full scan of finance.payments reads (its live data and delete files): the budget
    that one scan of it fits and two do not."""
    from pyiceberg.catalog import load_catalog

    from streamwarden.iceberg.scan import plan_table

    catalog = load_catalog(
        "lake", type="sql", uri=f"sqlite:///{root / '.lake' / 'catalog.db'}", warehouse=(root / ".lake").as_uri()
    )
    plan = plan_table(catalog.load_table("finance.payments"))
    return len({f.path for f in plan.data_files} | {d.path for d in plan.delete_files})


def _shadow_catalog(top: Path) -> dict[str, str]:
    """Another team's catalog, configured for PyIceberg by the CI's environment, not in streamwarden.yaml."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    (top / "shadow").mkdir()
    env = {
        "PYICEBERG_CATALOG__SHADOW__TYPE": "sql",
        "PYICEBERG_CATALOG__SHADOW__URI": f"sqlite:///{top / 'shadow' / 'catalog.db'}",
        "PYICEBERG_CATALOG__SHADOW__WAREHOUSE": (top / "shadow").as_uri(),
    }
    catalog = SqlCatalog(
        "shadow", uri=env["PYICEBERG_CATALOG__SHADOW__URI"], warehouse=env["PYICEBERG_CATALOG__SHADOW__WAREHOUSE"]
    )
    catalog.create_namespace("hr")
    data = pa.table({"employee": ["ada", "bob"], "salary_eur": [91000, 87000]})
    catalog.create_table("hr.salaries", schema=data.schema).append(data)
    return env


def _check(lake: dict[str, Any], *args: str, base: str | None = "main") -> Proc:
    extra = ["--base", base] if base else []
    return sw(
        "check", *extra, "--env", "local", "--format", "json", "--now", lake["now"], *args,
        cwd=lake["root"], env=lake["shadow_env"], timeout=900,
    )  # fmt: skip


def _findings(p: Proc, pipeline: str) -> list[dict[str, Any]]:
    assert p.code in (0, 1), p
    return [f for f in p.json()["findings"] if f["pipeline"] == pipeline]


def _rules(p: Proc, pipeline: str) -> list[str]:
    return sorted(f["rule"] for f in _findings(p, pipeline))


@pytest.fixture(scope="module")
def pull_request(lake: dict[str, Any]) -> Proc:
    """The hostile pull request checked against the examples' own configuration (no allow list),
    with a state file the pull request must not write."""
    lake["repo"].checkout("pr")
    return _check(lake, "--state-file", "state.json")


# --- 1. which tables a contract may read --------------------------------------------------------


def test_a_pull_request_cannot_point_a_contract_at_another_teams_table(pull_request: Proc) -> None:
    found = _findings(pull_request, "clickstream-sessions")
    refused = [f for f in found if f["rule"] == "SW-FACT-002"]
    assert len(refused) == 1, found
    assert refused[0]["severity"] == "error" and refused[0]["path"] == "table.identifier"
    assert "lake.sales.orders" in refused[0]["message"] and "lake.web.sessions" in refused[0]["message"]
    assert refused[0]["line"] > 1  # on the contract's table.identifier line
    # nothing of sales.orders came back: no duplicate values, no freshness, no schema
    assert not [f for f in found if f["source"] in ("iceberg", "data")], found
    assert not [f for f in found if f["rule"] == "SW-FACT-001"], found
    assert "customer_id=" not in pull_request.stdout and "updated_at" not in json.dumps(refused)


def test_a_contract_new_in_the_pull_request_reads_no_table_without_a_grant(pull_request: Proc) -> None:
    for name in ("aaa-decoy", "aab-thief"):
        refused = [f for f in _findings(pull_request, name) if f["rule"] == "SW-FACT-002"]
        assert len(refused) == 1 and "no version on the base" in refused[0]["message"], name
        assert not [f for f in _findings(pull_request, name) if f["source"] in ("iceberg", "data")]


def test_the_pipelines_the_pull_request_leaves_alone_are_still_checked_on_their_table(pull_request: Proc) -> None:
    payments = _findings(pull_request, "payments-cdc")
    assert "SW-FACT-002" not in _rules(pull_request, "payments-cdc")
    dups = [f for f in payments if f["rule"] == "SW-DATA-002"]
    assert len(dups) == 1 and dups[0]["message"].startswith("26 value(s) of (payment_id)")
    assert _findings(pull_request, "orders-enrichment") == []


def test_data_findings_give_counts_not_row_values_by_default(pull_request: Proc) -> None:
    dup = next(f for f in _findings(pull_request, "payments-cdc") if f["rule"] == "SW-DATA-002")
    assert "values not shown" in dup["message"] and "e.g." not in dup["message"]
    assert dup["evidence"]["samples"] == []


def test_a_pull_request_never_writes_the_trusted_state_file(lake: dict[str, Any], pull_request: Proc) -> None:
    assert pull_request.code == 1
    assert not (lake["root"] / "state.json").exists()


def test_grants_are_matched_against_the_owner_on_the_base_not_the_one_the_pull_request_writes(
    lake: dict[str, Any], granted: Proc
) -> None:
    click = [f for f in _findings(granted, "clickstream-sessions") if f["rule"] == "SW-FACT-002"]
    assert len(click) == 1 and "owner 'web-analytics'" in click[0]["message"]
    thief = [f for f in _findings(granted, "aab-thief") if f["rule"] == "SW-FACT-002"]
    assert len(thief) == 1 and "owner is not yet on the base" in thief[0]["message"]
    # the decoy is granted finance.payments (a table entry without owners): it is read
    assert "SW-FACT-002" not in _rules(granted, "aaa-decoy")


def test_the_facts_of_a_refused_table_are_not_gathered(lake: dict[str, Any]) -> None:
    lake["repo"].checkout("pr2")
    try:
        p = sw("facts", "clickstream-sessions", "--env", "local", "--now", lake["now"], cwd=lake["root"])
    finally:
        lake["repo"].checkout("pr")
    assert p.code == 0, p
    facts = p.json()["facts"]
    assert facts["access"]["allowed"] is False and facts["access"]["owner"] == "web-analytics"
    assert facts["iceberg"] == {
        "available": False,
        "configured": True,
        "refused": True,
        "error": facts["access"]["reason"],
    }
    assert facts["data"]["refused"] is True and "schema" not in json.dumps(facts["iceberg"])


def test_the_access_settings_come_from_the_trusted_ref_not_the_pull_request(lake: dict[str, Any]) -> None:
    """pr3 rewrites streamwarden.yaml to grant sales.* to anyone, to use PyIceberg's own catalogs
    and to show row values: checked against trusted2, none of it applies."""
    lake["repo"].checkout("pr3")
    try:
        p = _check(lake, "clickstream-sessions/contract.yaml", "zz-shadow/contract.yaml", base="trusted2")
    finally:
        lake["repo"].checkout("pr")
    click = [f for f in _findings(p, "clickstream-sessions") if f["rule"] == "SW-FACT-002"]
    assert len(click) == 1 and "owner 'web-analytics'" in click[0]["message"], p
    assert not [f for f in _findings(p, "clickstream-sessions") if f["source"] in ("iceberg", "data")]
    shadow = [f for f in _findings(p, "zz-shadow") if f["rule"] == "SW-FACT-002"]
    assert len(shadow) == 1 and shadow[0]["path"] == "table.catalog"
    assert "SW-POLICY-001" in [f["rule"] for f in p.json()["findings"]]  # the change itself is reported


# --- 2. the state file ----------------------------------------------------------------------------


def test_a_decoy_contract_cannot_hide_another_pipelines_duplicates_through_the_state_file(
    lake: dict[str, Any], tmp_path: Path
) -> None:
    """After merge (no --base): the decoy, first in file order, checks finance.payments for
    freshness only; payments-cdc's duplicates stay found in this run and in the next one."""
    state = tmp_path / "state.json"
    paths = ["aaa-decoy/contract.yaml", "payments-cdc/contract.yaml"]
    for _ in range(2):
        p = _check(lake, "--state-file", str(state), *paths, base=None)
        dups = [f for f in _findings(p, "payments-cdc") if f["rule"] == "SW-DATA-002"]
        assert len(dups) == 1 and dups[0]["message"].startswith("26 value(s) of (payment_id)"), p
        assert not [r for r in _rules(p, "aaa-decoy") if r.startswith("SW-FACT-")], p
    doc = json.loads(state.read_text(encoding="utf-8"))
    entries = {e["pipeline"]: e for e in doc["checks"].values()}
    assert set(entries) == {"aaa-decoy", "payments-cdc"}
    assert entries["payments-cdc"]["snapshot_id"] is None  # held: its duplicates are still live
    assert entries["aaa-decoy"]["snapshot_id"] == entries["aaa-decoy"]["checked_snapshot_id"] is not None


# --- 3. catalogs ----------------------------------------------------------------------------------


def test_a_contract_cannot_reach_a_catalog_only_pyiceberg_configures(pull_request: Proc) -> None:
    refused = [f for f in _findings(pull_request, "zz-shadow") if f["rule"] == "SW-FACT-002"]
    assert len(refused) == 1 and refused[0]["path"] == "table.catalog", _findings(pull_request, "zz-shadow")
    assert "catalog 'shadow' is not one this environment configures" in refused[0]["message"]
    assert not [f for f in _findings(pull_request, "zz-shadow") if f["source"] == "iceberg"]
    assert "nothing_here" not in json.dumps(refused) and "salary" not in pull_request.stdout


def test_falling_back_to_pyiceberg_configuration_is_opt_in_per_environment(lake: dict[str, Any]) -> None:
    lake["repo"].checkout("pr2")
    try:
        kw: dict[str, Any] = {"cwd": lake["root"], "env": lake["shadow_env"]}
        opted_in = sw("facts", "zz-shadow", "--env", "withpy", "--now", lake["now"], **kw)
        default = sw("facts", "zz-shadow", "--env", "local", "--now", lake["now"], **kw)
    finally:
        lake["repo"].checkout("pr")
    assert opted_in.code == 0 and default.code == 0, (opted_in, default)
    fields = [f["name"] for f in opted_in.json()["facts"]["iceberg"]["schema"]["fields"]]
    assert fields == ["employee", "salary_eur"]
    assert opted_in.json()["facts"]["access"]["grant"] == "no allow list"
    assert default.json()["facts"]["access"]["field"] == "table.catalog"
    assert default.json()["facts"]["iceberg"]["refused"] is True


# --- 4. shared scans and the budget -----------------------------------------------------------------


@pytest.fixture(scope="module")
def granted(lake: dict[str, Any]) -> Proc:
    """pr2 against trusted2: grants per namespace and owner, and a budget of exactly one scan of
    finance.payments."""
    lake["repo"].checkout("pr2")
    try:
        return _check(lake, base="trusted2")
    finally:
        lake["repo"].checkout("pr")


def test_contracts_on_one_table_share_one_scan_within_the_budget(granted: Proc) -> None:
    # the decoy and payments-cdc read finance.payments: one scan, which the budget holds exactly
    assert "SW-FACT-001" not in _rules(granted, "payments-cdc")
    assert "SW-FACT-001" not in _rules(granted, "aaa-decoy")
    assert "SW-DATA-002" in _rules(granted, "payments-cdc")


def test_a_scan_over_the_runs_budget_is_not_run_and_names_the_budget(granted: Proc) -> None:
    gaps = [f for f in _findings(granted, "orders-enrichment") if f["rule"] == "SW-FACT-001"]
    assert len(gaps) == 1 and gaps[0]["path"] == "facts.data", _findings(granted, "orders-enrichment")
    assert "over the scan budget" in gaps[0]["message"]
    assert "iceberg.data.scan_budget.files" in gaps[0]["message"] and "lake.sales.orders" in gaps[0]["message"]
