"""No secret written into a deployment file is shown, in any spelling, by any report or ``facts``.

A generated corpus: every secret-named Flink option (password, secret, secret-key, token,
access-key, key-password, keystore/truststore password, connection-string, sasl.jaas.config) in
every way a deployment file can set it (a flat and a nested Flink 2 ``config.yaml``, a legacy
``flink-conf.yaml``, a FlinkDeployment's ``flinkConfiguration``, a SQL ``SET``); JVM options
(``env.java.opts.*``) with ``-D<name>=<value>`` in every case style (password, Password,
PASSWORD, keyPassword, trustStorePassword, DB_PASSWORD, secretKey, sessionToken...); the cloud
spellings in a URL's query string and in JSON (``accessKey``/``secretKey``/``sessionToken``,
``sig=``, ``SharedAccessSignature``, ``clientSecret``). Every value is distinct and looks like no
word, so no assertion can pass because a value happens to be masked for another reason.

``check`` runs in every format (text, json, sarif, junit, github, markdown) and ``facts`` for
every pipeline; neither a value nor any prefix of one longer than 8 characters appears on stdout
or stderr. Masking must not hide the finding: each key set twice in a file is still reported
(SW-DEPLOY-004, path = the key), the checkpoint directory with secrets in its query string is still
compared with the contract (SW-DEPLOY-005), a legacy line Flink cannot split is still quoted, and
``facts`` still lists every key, its value ``***``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.acceptance.test_hostile_servers import REPORT_FORMATS, assert_no_secret
from tests.cli import Proc, sw
from tests.conftest import CLEAN_CONTRACT, NOW

# options whose name says they hold a secret (Flink's own, its file systems', a connector's)
SECRET_KEYS = (
    "security.ssl.internal.keystore-password",
    "security.ssl.rest.truststore-password",
    "security.ssl.internal.key-password",
    "s3.secret-key",
    "s3.access-key",
    "fs.s3a.session.token",
    "metrics.reporter.influx.password",
    "fs.azure.account.oauth2.client.secret",
    "fs.azure.account.key.acct.dfs.core.windows.net",
    "fs.azure.connection-string",
    "properties.sasl.jaas.config",
)
# a JVM system property's name, in the case styles people write
JVM_NAMES = (
    "password",
    "app.Password",
    "PASSWORD",
    "keyPassword",
    "javax.net.ssl.trustStorePassword",
    "javax.net.ssl.keyStorePassword",
    "db_password",
    "DB_PASSWORD",
    "db-password",
    "aws.secretAccessKey",
    "secretKey",
    "sessionToken",
    "clientSecret",
    "apiKey",
)
JVM_KEYS = ("env.java.opts.all", "env.java.opts.jobmanager", "env.java.opts.taskmanager")
FORMATS = ("flat", "legacy", "deployment", "sql")  # nested config.yaml: in "flat", set again nested


def secret(*parts: str) -> str:
    """A distinct value that looks like no word (mixed case, digits): masked only if recognised."""
    return "Zq" + hashlib.sha256("/".join(parts).encode()).hexdigest()[:10] + "Xk7"


SECRETS: list[str] = []


def _s(*parts: str) -> str:
    value = secret(*parts)
    SECRETS.append(value)
    return value


def _nested(values: dict[str, str], indent: str = "") -> str:
    """The keys as nested YAML mappings (one tree: ``s3: {secret-key: ...}``), values quoted."""
    tree: dict[str, Any] = {}
    for key, value in values.items():
        *parents, last = key.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    text = yaml.safe_dump(tree, default_style=None, default_flow_style=False, sort_keys=False, width=1000)
    return "".join(f"{indent}{line}\n" for line in text.splitlines())


def _jvm(fmt: str, key: str) -> str:
    return " ".join(f"-D{name}={_s(fmt, key, name)}" for name in JVM_NAMES)


def _cloud(fmt: str) -> dict[str, str]:
    """Values with a secret inside, each under a key whose name is no secret."""
    return {
        "execution.checkpointing.dir": (
            f"s3://lake-checkpoints/orders?accessKey={_s(fmt, 'ak')}&secretKey={_s(fmt, 'sk')}"
            f"&sessionToken={_s(fmt, 'st')}"
        ),
        "execution.checkpointing.savepoint-dir": (
            f"abfss://c@acct.dfs.core.windows.net/sp?sv=2021-06-08&sp=r&sig={_s(fmt, 'sig')}"
        ),
        "acme.blob.endpoint": (
            f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature={_s(fmt, 'sas')}"
        ),
        "acme.gcs.service-account-json": (
            json.dumps({"type": "service_account", "clientSecret": _s(fmt, "cs"), "private_key": _s(fmt, "pk")})
        ),
    }


def _quoted(value: str) -> str:
    return json.dumps(value)  # a YAML double-quoted scalar


def flat_config() -> str:
    out = "pipeline.name: p-flat\n"
    out += "".join(f"{k}: {_s('flat', k)}\n" for k in SECRET_KEYS)
    out += "".join(f"{k}: {_quoted(_jvm('flat', k))}\n" for k in JVM_KEYS)
    out += "".join(f"{k}: {_quoted(v)}\n" for k, v in _cloud("flat").items())
    # the same keys again, nested (Flink 2 reads both spellings as one key: set twice)
    out += _nested({k: _s("nested", k) for k in SECRET_KEYS})
    return out


def legacy_conf() -> str:
    out = "pipeline.name: p-legacy\n"
    out += "".join(f"{k}: {_s('legacy', k)}\n" for k in SECRET_KEYS)
    out += "".join(f"{k}: {_s('legacy-again', k)}\n" for k in SECRET_KEYS)
    out += "".join(f"{k}: {_jvm('legacy', k)}\n" for k in JVM_KEYS)
    out += "".join(f"{k}: {v}\n" for k, v in _cloud("legacy").items())
    # lines Flink 1.x cannot split (no space after the colon): quoted in SW-DEPLOY-004's message
    out += f"env.java.opts.client:-Djavax.net.ssl.trustStorePassword={_s('legacy', 'unsplit')}\n"
    out += f"s3.secret-key:{_s('legacy', 'unsplit-key')}\n"
    return out


def flink_deployment() -> str:
    conf = "".join(f"    {k}: {_quoted(_s('deployment', k))}\n" for k in SECRET_KEYS)
    conf += "".join(f"    {k}: {_quoted(_jvm('deployment', k))}\n" for k in JVM_KEYS)
    conf += "".join(f"    {k}: {_quoted(v)}\n" for k, v in _cloud("deployment").items())
    conf += _nested({k: _s("deployment-nested", k) for k in SECRET_KEYS}, indent="    ")
    return (
        "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata:\n  name: p-deployment\n"
        f"spec:\n  flinkVersion: v1_20\n  flinkConfiguration:\n{conf}"
    )


def sql_script() -> str:
    out = "".join(f"SET '{k}' = '{_s('sql', k)}';\n" for k in SECRET_KEYS)
    out += "".join(f"SET '{k}' = '{_jvm('sql', k)}';\n" for k in JVM_KEYS)
    out += "".join(f"SET '{k}' = '{v}';\n" for k, v in _cloud("sql").items())
    return out + "INSERT INTO sink SELECT * FROM source;\n"


FILES = {
    "flat": ("config.yaml", flat_config),
    "legacy": ("flink-conf.yaml", legacy_conf),
    "deployment": ("flinkdeployment.yaml", flink_deployment),
    "sql": ("job.sql", sql_script),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One repository, one pipeline per file format, each naming its deployment file."""
    root = tmp_path_factory.mktemp("secrets-corpus")
    for fmt, (name, make) in FILES.items():
        d = root / "contracts" / fmt
        (d / "deploy").mkdir(parents=True)
        (d / "deploy" / name).write_text(make(), encoding="utf-8")
        contract = CLEAN_CONTRACT.replace("name: orders-enrichment", f"name: p-{fmt}").replace(
            "  restart_strategy: exponential-delay\n",
            f"  restart_strategy: exponential-delay\n  deployment: [deploy/{name}]\n",
        )
        (d / "contract.yaml").write_text(contract, encoding="utf-8")
    return root


def test_the_corpus_holds_every_key_in_every_spelling(corpus: Path) -> None:
    assert len(SECRETS) == len(set(SECRETS))  # distinct: each assertion is about one value
    # per format: the keys (twice in flat, legacy and deployment), the JVM names under each JVM
    # key, the cloud values (7 secrets)
    per_jvm = len(JVM_KEYS) * len(JVM_NAMES)
    assert len(SECRETS) == (2 + 2 + 2 + 1) * len(SECRET_KEYS) + 4 * (per_jvm + 7) + 2


def _runs(root: Path) -> Iterator[tuple[str, Proc]]:
    for fmt in REPORT_FORMATS:
        yield fmt, sw("check", "--no-cache", "--now", NOW, "--format", fmt, cwd=root)
    for fmt in FILES:
        yield f"facts p-{fmt}", sw("facts", f"p-{fmt}", "--now", NOW, cwd=root)


@pytest.fixture(scope="module")
def outputs(corpus: Path) -> dict[str, Proc]:
    return dict(_runs(corpus))


@pytest.mark.parametrize("what", [*REPORT_FORMATS, *(f"facts p-{f}" for f in FILES)])
def test_no_secret_value_is_shown(outputs: dict[str, Proc], what: str) -> None:
    p = outputs[what]
    assert p.code in (0, 1), p
    assert_no_secret(p.output, *SECRETS)


def _findings(outputs: dict[str, Proc], pipeline: str) -> list[dict[str, Any]]:
    return [f for f in outputs["json"].json()["findings"] if f["pipeline"] == pipeline]


@pytest.mark.parametrize("fmt", ["flat", "legacy", "deployment"])
def test_a_secret_key_set_twice_is_still_reported(outputs: dict[str, Proc], fmt: str) -> None:
    twice = {f["path"] for f in _findings(outputs, f"p-{fmt}") if f["rule"] == "SW-DEPLOY-004"}
    assert set(SECRET_KEYS) <= twice, sorted(set(SECRET_KEYS) - twice)


@pytest.mark.parametrize("fmt", list(FILES))
def test_a_checkpoint_directory_with_secrets_is_still_compared(outputs: dict[str, Proc], fmt: str) -> None:
    (differs,) = [
        f
        for f in _findings(outputs, f"p-{fmt}")
        if f["rule"] == "SW-DEPLOY-005" and f["path"] == "execution.checkpointing.dir"
    ]
    assert "s3://lake-checkpoints/orders?accessKey=***&secretKey=***&sessionToken=***" in differs["message"]
    for name in ("text", "github", "markdown", "sarif", "junit"):
        assert "SW-DEPLOY-005" in outputs[name].stdout, name


def test_a_legacy_line_flink_cannot_split_is_still_quoted(outputs: dict[str, Proc]) -> None:
    messages = [f["message"] for f in _findings(outputs, "p-legacy") if f["rule"] == "SW-DEPLOY-004"]
    assert any("'env.java.opts.client:-Djavax.net.ssl.trustStorePassword=***'" in m for m in messages), messages
    assert any("'s3.secret-key:***'" in m for m in messages), messages


@pytest.mark.parametrize("fmt", list(FILES))
def test_facts_list_every_key_with_its_value_masked(outputs: dict[str, Proc], fmt: str) -> None:
    config = outputs[f"facts p-{fmt}"].json()["facts"]["deployment"]["config"]
    for key in SECRET_KEYS:
        assert config[key]["key"] == key and config[key]["raw"] == "***" and config[key]["value"] == "***", key
    for key in JVM_KEYS:
        raw = config[key]["raw"]
        assert raw == " ".join(f"-D{name}=***" for name in JVM_NAMES), raw
    assert config["execution.checkpointing.dir"]["raw"].endswith("?accessKey=***&secretKey=***&sessionToken=***")
    assert config["execution.checkpointing.savepoint-dir"]["raw"].endswith("&sig=***")
    assert config["acme.blob.endpoint"]["raw"].endswith("SharedAccessSignature=***")
    assert json.loads(config["acme.gcs.service-account-json"]["raw"]) == {
        "type": "service_account",
        "clientSecret": "***",
        "private_key": "***",
    }
