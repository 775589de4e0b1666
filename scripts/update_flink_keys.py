"""Regenerate ``src/streamwarden/flink/keys/flink.txt``: every configuration key of Flink 1.15-2.3.

The keys are read from Flink's own option classes, not typed in by hand: a small Java program
(``scripts/flink_options/ListOptions.java``) loads the jars of a Flink distribution and lists every
``ConfigOption`` a class declares as a static field, with its fallback and deprecated keys (the
keys Flink still reads in their place). Each release is read from the jars of the
``apache-flink-libraries`` package on PyPI (``lib/``, ``opt/``, ``plugins/``, and the planner jar
inside ``flink-table-planner-loader``); ``--dist VERSION=DIR`` reads an unpacked distribution
instead (a directory with ``lib/``, e.g. the ``pyflink`` directory of an installed
``apache-flink``). Needs ``javac`` and ``java`` (11 or later).

    python scripts/update_flink_keys.py --download     # every release in VERSIONS (~250 MB each, one at a time)
    python scripts/update_flink_keys.py --dist 2.3.0=.../site-packages/pyflink --download
    python scripts/update_flink_keys.py --render-only         # rebuild flink.txt from the lists kept in --work

Each release's list is kept in ``--work`` (default ``build/flink-options``), so a later run reads
only the releases it lacks. What is left out, and why, is in :data:`TABLE_OPTION_OWNERS` and
:data:`RUNTIME_PATTERNS`: options of table connectors and formats (``WITH (...)`` options, not
configuration keys) and the relative keys of metric reporters (they live under
``metrics.reporter.<name>.``, which stays open).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAVA_SOURCE = ROOT / "scripts" / "flink_options" / "ListOptions.java"
OUTPUT = ROOT / "src" / "streamwarden" / "flink" / "keys" / "flink.txt"

# The newest patch release of each minor release the key list covers.
VERSIONS = ("1.15.4", "1.16.3", "1.17.2", "1.18.1", "1.19.3", "1.20.5", "2.0.2", "2.1.3", "2.2.1", "2.3.0")

# Classes whose options are options of a table connector, format, catalog or module (written in
# `WITH (...)`, not in the Flink configuration), relative keys of a metric reporter plugin (under
# metrics.reporter.<name>.), or per-operator settings of the stream graph. Their keys are left out
# unless they start with a configuration namespace (FactoryUtil also declares workflow-scheduler.type
# and sql-gateway.endpoint.type; CommonCatalogOptions table.catalog-store.kind).
TABLE_OPTION_OWNERS = (
    "org.apache.flink.connector.",
    "org.apache.flink.formats.",
    "org.apache.flink.metrics.",
    "org.apache.flink.table.factories.",
    "org.apache.flink.table.connector.",
    "org.apache.flink.table.sinks.",
    "org.apache.flink.table.catalog.",
    "org.apache.flink.table.module.",
    "org.apache.flink.table.secret.",
    "org.apache.flink.table.utils.python.",
    "org.apache.flink.table.runtime.arrow.",
    "org.apache.flink.streaming.api.graph.StreamConfig",
    "org.apache.flink.table.legacy.",
    # options of a query hint or of a function call (LOOKUP, ML_PREDICT, VECTOR_SEARCH), not keys
    "org.apache.flink.table.planner.hint.",
    "org.apache.flink.table.api.config.LookupJoinHintOptions",
    "org.apache.flink.table.api.config.MLPredictRuntimeConfigOptions",
    "org.apache.flink.table.api.config.VectorSearchRuntimeConfigOptions",
)
# MetricOptions.REPORTER_CLASS (1.16-1.20) is relative to metrics.reporter.<name>. but carries no
# SuffixOption annotation: the pattern metrics.reporter.<name>.* covers it.
RELATIVE_KEYS = frozenset({"class"})
CONFIG_NAMESPACES_OF_TABLE_CLASSES = ("table.", "sql-gateway.", "workflow-scheduler.")

# Keys Flink builds at run time from a name the user chooses, or reads outside a ConfigOption.
RUNTIME_PATTERNS = (
    # CoreOptions.fileSystemConnectionLimit*(scheme): per-scheme connection limits
    "fs.<scheme>.limit.total",
    "fs.<scheme>.limit.input",
    "fs.<scheme>.limit.output",
    "fs.<scheme>.limit.timeout",
    "fs.<scheme>.limit.stream-timeout",
    # ResourceManagerOptions.CONTAINERIZED_MASTER_ENV_PREFIX / CONTAINERIZED_TASK_MANAGER_ENV_PREFIX:
    # environment variables of the JobManager / TaskManager containers
    "containerized.master.env.*",
    "containerized.taskmanager.env.*",
    # DefaultDelegationTokenManager: security.delegation.token.provider.<serviceName>.enabled and
    # the provider's own settings below it
    "security.delegation.token.provider.<name>.*",
    # bin/config.sh reads these with readFromConfig (KEY_ENV_* and the legacy forms it falls back to)
    "env.pid.dir",
    "env.log.dir",
    "env.log.max",
    "env.log.level",
    "env.stdout-err.redirect-to-file",
    "env.yarn.conf.dir",
    "env.hadoop.conf.dir",
    "env.hbase.conf.dir",
    "env.java.home",
    "env.java.opts",
    "env.java.opts.all",
    "env.java.opts.jobmanager",
    "env.java.opts.taskmanager",
    "env.java.opts.historyserver",
    "env.java.opts.client",
    "env.java.opts.sql-gateway",
    "env.java.default-opts.all",
    "env.java.default-opts.jobmanager",
    "env.java.default-opts.taskmanager",
    "env.ssh.opts",
    "taskmanager.compute.numa",
    "zookeeper.heap.mb",
    "high-availability",
    "recovery.mode",
    # ConfigConstants (1.x; not ConfigOptions): the Hadoop configuration files HadoopUtils reads
    "fs.hdfs.hadoopconf",
    "fs.hdfs.hdfsdefault",
    "fs.hdfs.hdfssite",
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, default=ROOT / "build" / "flink-options")
    p.add_argument("--dist", action="append", default=[], help="VERSION=DIR: read an unpacked distribution")
    p.add_argument("--download", action="store_true", help="pip download the releases the work dir lacks")
    p.add_argument("--render-only", action="store_true")
    p.add_argument("--output", type=Path, default=OUTPUT)
    return p.parse_args(argv)


def compile_lister(work: Path) -> Path:
    classes = work / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-d", str(classes), str(JAVA_SOURCE)], check=True)
    return classes


def jars_of(dist: Path, scratch: Path) -> list[Path]:
    """The jars of an unpacked distribution (``deps/`` of the PyPI package, or ``lib/`` beside
    ``opt/`` and ``plugins/``), with the planner jar the loader jar carries unpacked next to them."""
    base = dist / "deps" if (dist / "deps" / "lib").is_dir() else dist
    jars = sorted(base.glob("lib/*.jar")) + sorted(base.glob("opt/*.jar")) + sorted(base.glob("plugins/*/*.jar"))
    out: list[Path] = []
    for jar in jars:
        if jar.name.startswith("log4j"):
            continue
        if "planner-loader" in jar.name:
            with zipfile.ZipFile(jar) as z:
                for name in z.namelist():
                    if name.endswith(".jar"):
                        target = scratch / f"nested-{Path(name).name}"
                        target.write_bytes(z.read(name))
                        out.append(target)
            continue
        out.append(jar)
    return out


def list_options(classes: Path, jars: list[Path], target: Path) -> None:
    result = subprocess.run(
        ["java", "-cp", str(classes), "ListOptions", *map(str, jars)],
        check=True,
        capture_output=True,
        text=True,
    )
    if not result.stdout.strip():
        raise SystemExit(f"no option found in {len(jars)} jars: {result.stderr[-2000:]}")
    target.write_text(result.stdout, encoding="utf-8")
    print(f"{target.name}: {len(result.stdout.splitlines())} keys ({result.stderr.strip().splitlines()[-1]})")


def download(version: str, scratch: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-d",
            str(scratch),
            f"apache-flink-libraries=={version}",
        ],
        check=True,
    )
    wheels = list(scratch.glob("*.whl"))
    if wheels:  # newer releases come as a wheel: pyflink/lib, pyflink/opt, pyflink/plugins
        with zipfile.ZipFile(wheels[0]) as z:
            for name in z.namelist():
                if name.startswith("pyflink/") and name.endswith(".jar"):
                    z.extract(name, scratch)
        wheels[0].unlink()
        return scratch / "pyflink"
    [archive] = list(scratch.glob("*.tar.gz"))  # apache-flink-libraries-X.tar.gz or apache_flink_libraries-X
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and "/deps/" in m.name and m.name.endswith(".jar")]
        tar.extractall(scratch, members=members, filter="data")
    archive.unlink()
    [top] = [p for p in scratch.iterdir() if (p / "deps").is_dir()]
    return top


def kept(key: str, owner: str) -> bool:
    if owner.startswith(TABLE_OPTION_OWNERS):
        return key.startswith(CONFIG_NAMESPACES_OF_TABLE_CLASSES)
    return key not in RELATIVE_KEYS


def entry(key: str) -> str:
    """A key as the key files write it: ``<parameter>`` (anything, dots included) becomes ``*``."""
    return key.replace("<parameter>", "*")


def render(work: Path, output: Path) -> None:
    seen: dict[str, list[str]] = {}
    maps: set[str] = set()
    versions = [v for v in VERSIONS if (work / f"{v}.tsv").is_file()]
    missing = [v for v in VERSIONS if v not in versions]
    if missing:
        raise SystemExit(f"no option list for {', '.join(missing)} in {work}: run with --download or --dist")
    for version in versions:
        for line in (work / f"{version}.tsv").read_text(encoding="utf-8").splitlines():
            key, _role, owner, value_type = line.split("\t")
            if not kept(key, owner):
                continue
            seen.setdefault(entry(key), []).append(version)
            if value_type == "Map":
                maps.add(entry(key))
    for pattern in RUNTIME_PATTERNS:
        seen.setdefault(pattern, list(versions))
    short = {v: v.rsplit(".", 1)[0] for v in versions}
    lines = [
        "# Every configuration key of Flink " + f"{short[versions[0]]}-{short[versions[-1]]}, generated by",
        "# scripts/update_flink_keys.py from the option classes of apache-flink-libraries "
        + ", ".join(versions)
        + " (PyPI;",
        "# Apache-2.0): each ConfigOption with its fallback and deprecated keys, without the options of",
        "# table connectors and formats, plus the keys Flink builds at run time (the script lists them).",
        "# Do not edit by hand: rerun the script. One key per line; after '#', the releases that have it;",
        "# 'prefix.*' accepts every key below the prefix; '<name>' is one segment. A map option (map)",
        "# also accepts its entries as keys below it (Flink reads 'key.entry: value' into the map).",
    ]
    for key in sorted(seen):
        have = seen[key]
        span = short[have[0]] if short[have[0]] == short[have[-1]] else f"{short[have[0]]}-{short[have[-1]]}"
        gaps = [short[v] for v in versions[versions.index(have[0]) : versions.index(have[-1]) + 1] if v not in have]
        note = span + (f" (not {', '.join(gaps)})" if gaps else "") + (" map" if key in maps else "")
        lines.append(f"{key}  # {note}")
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{output}: {len(seen)} keys")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    if not args.render_only:
        classes = compile_lister(work)
        dists = dict(d.split("=", 1) for d in args.dist)
        for version in VERSIONS:
            target = work / f"{version}.tsv"
            if target.is_file() and version not in dists:
                continue
            with tempfile.TemporaryDirectory(prefix=f"flink-{version}-") as tmp:
                scratch = Path(tmp)
                if version in dists:
                    dist = Path(dists[version])
                elif args.download:
                    dist = download(version, scratch)
                else:
                    print(f"{version}: no list in {work}; give --download or --dist {version}=DIR", file=sys.stderr)
                    continue
                list_options(classes, jars_of(dist, scratch), target)
            shutil.rmtree(work / "scratch", ignore_errors=True)
    render(work, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
