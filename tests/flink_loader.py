"""Flink 2.3.0's own configuration loader, run on files the tests write: the oracle for how a
``config.yaml`` is read.

``GlobalConfiguration.loadConfiguration(dir)`` from the ``flink-dist`` jar of the Flink test venv
(tests/flink_cluster.py installs it) loads each directory's ``config.yaml``; a small Java program,
compiled once per test session, prints for each directory either the loader's error or the keys
it holds (``Configuration.toMap()``) and the value of each key asked for, read as a typed option
(``durationType()``, ``booleanType()``, ``intType()``, ``memoryType()``, ``stringType()``) — the
way Flink's own code reads it. One JVM reads every directory of a call.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

SOURCE = r"""
import org.apache.flink.configuration.*;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.time.Duration;
import java.util.*;

public class FlinkReads {
  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      String[] parts = line.split("\t");
      Configuration conf;
      try {
        conf = GlobalConfiguration.loadConfiguration(parts[0]);
      } catch (Throwable t) {
        Throwable cause = t.getCause() != null ? t.getCause() : t;
        out.println("{\"error\": " + q(cause.getClass().getSimpleName() + ": " + cause.getMessage()) + "}");
        continue;
      }
      StringBuilder keys = new StringBuilder();
      for (Map.Entry<String, String> e : new TreeMap<>(conf.toMap()).entrySet()) {
        keys.append(keys.length() == 0 ? "" : ", ").append(q(e.getKey())).append(": ").append(q(e.getValue()));
      }
      StringBuilder typed = new StringBuilder();
      for (int i = 1; i < parts.length; i++) {
        int eq = parts[i].lastIndexOf('=');
        String key = parts[i].substring(0, eq), type = parts[i].substring(eq + 1);
        String value;
        try {
          Object v;
          switch (type) {
            case "duration": {
              Duration d = conf.get(ConfigOptions.key(key).durationType().noDefaultValue());
              v = d == null ? null : d.toMillis();
              break;
            }
            case "memory": {
              MemorySize m = conf.get(ConfigOptions.key(key).memoryType().noDefaultValue());
              v = m == null ? null : m.getBytes();
              break;
            }
            case "bool": v = conf.get(ConfigOptions.key(key).booleanType().noDefaultValue()); break;
            case "int": v = conf.get(ConfigOptions.key(key).intType().noDefaultValue()); break;
            default: v = conf.get(ConfigOptions.key(key).stringType().noDefaultValue());
          }
          value = "{\"value\": " + (v == null ? "null" : v instanceof String ? q((String) v) : v.toString()) + "}";
        } catch (Throwable t) {
          value = "{\"error\": " + q(t.getClass().getSimpleName() + ": " + t.getMessage()) + "}";
        }
        typed.append(typed.length() == 0 ? "" : ", ").append(q(key)).append(": ").append(value);
      }
      out.println("{\"keys\": {" + keys + "}, \"typed\": {" + typed + "}}");
    }
  }

  static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : String.valueOf(s).toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
"""


def flink_lib() -> Path | None:
    """The lib directory of Flink 2.3.0 in the test venv (with flink-dist and log4j), or None."""
    from tests.flink_cluster import flink_home, venv_dir

    home = flink_home(venv_dir())
    if home is None or not sorted(home.glob("lib/flink-dist-*.jar")):
        return None
    return home / "lib"


def missing_reason() -> str | None:
    """None when Flink's loader can run here, else why not (the reason a test skips)."""
    if not shutil.which("javac") or not shutil.which("java"):
        return "needs javac and java (a JDK 11, 17 or 21) to run Flink 2.3.0's own configuration loader"
    if flink_lib() is None:
        return "needs flink-dist from the Flink test venv (python tests/flink_cluster.py --install)"
    return None


class FlinkLoader:
    """The compiled program; :meth:`read` runs it on directories holding a config.yaml each."""

    def __init__(self, workdir: Path) -> None:
        lib = flink_lib()
        assert lib is not None, missing_reason()
        self.classpath = ":".join([*(str(j) for j in sorted(lib.glob("*.jar"))), str(workdir)])
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "FlinkReads.java").write_text(SOURCE, encoding="utf-8")
        subprocess.run(
            ["javac", "-encoding", "UTF-8", "-cp", self.classpath, str(workdir / "FlinkReads.java")],
            check=True,
            capture_output=True,
            timeout=300,
        )

    def read(self, requests: list[tuple[Path, dict[str, str]]]) -> list[dict[str, Any]]:
        """For each (directory, {key: type}): ``{"error": ...}`` when the loader refuses the file,
        else ``{"keys": {key: text}, "typed": {key: {"value": v} | {"error": ...}}}``."""
        spec = self.workdir / "requests.tsv"
        spec.write_text(
            "".join("\t".join([str(d), *(f"{k}={t}" for k, t in types.items())]) + "\n" for d, types in requests),
            encoding="utf-8",
        )
        proc = subprocess.run(
            ["java", "-cp", self.classpath, "FlinkReads", str(spec)],
            check=True,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=600,
        )
        answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        assert len(answers) == len(requests), proc.stdout + proc.stderr
        return answers
