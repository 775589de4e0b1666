"""Which contracts write which tables: the repository-wide facts of "one writer per table".

A contract writes a table when a sink names it (``job.sinks[].table``) or it declares the table
contract (``table.identifier``); it says it is a backfill or fork of the table's owner with
``fork_of``. Each contract's part (:class:`Writer`) is read while the run checks it (and kept by the
result cache: it depends on the contract's text alone); once every contract is checked, the tables
that more than one contract writes are put in one document (``inputdoc.writers``) and the policy
package streamwarden.writers judges them (SW-TABLE-014), once per run. A run where every table has
one writer evaluates nothing more. Facts only: who owns a table is decided in Rego.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamwarden.contracts import Contract

PACKAGE = "streamwarden.writers"


@dataclass
class Writer:
    pipeline: str
    file: str
    tables: list[dict[str, Any]]  # {"table", "path", "line"}: each place the contract names a table it writes
    owns: str | None  # table.identifier: the contract declares that table's contract
    fork_of: dict[str, Any] | None
    fork_of_line: int | None
    fork_of_pipeline_line: int | None
    waivers: list[Any] = field(default_factory=list)  # the contract's own
    # in a pull request: what the base held under this name ({"status", "tables", "fork_of"}), and
    # the waivers in force (the trusted ref's)
    base: dict[str, Any] | None = None
    trusted_waivers: list[Any] | None = None

    def cached(self) -> dict[str, Any]:
        """What the result cache keeps (the head's part: a function of the contract's text and path)."""
        return {
            "tables": self.tables,
            "owns": self.owns,
            "fork_of": self.fork_of,
            "fork_of_line": self.fork_of_line,
            "fork_of_pipeline_line": self.fork_of_pipeline_line,
        }

    def document(self) -> dict[str, Any]:
        return {
            "pipeline": self.pipeline,
            "file": self.file,
            "tables": self.tables,
            "owns": self.owns,
            "fork_of": self.fork_of,
            "fork_of_line": self.fork_of_line,
            "fork_of_pipeline_line": self.fork_of_pipeline_line,
            "base": self.base,
        }


def tables_written(data: dict[str, Any]) -> tuple[list[tuple[str, str]], str | None]:
    """``[(table, path)]`` in contract order, and the table whose contract it declares."""
    out: list[tuple[str, str]] = []
    table = data.get("table")
    owns = table.get("identifier") if isinstance(table, dict) else None
    owns = owns if isinstance(owns, str) else None
    for i, sink in enumerate((data.get("job") or {}).get("sinks") or []):
        if isinstance(sink, dict) and isinstance(sink.get("table"), str):
            out.append((sink["table"], f"job.sinks[{i}].table"))
    if owns is not None:
        out.append((owns, "table.identifier"))
    return out, owns


def writer_of(contract: Contract) -> Writer | None:
    """The tables ``contract`` writes, or None when it writes none."""
    data = contract.data
    written, owns = tables_written(data)
    if not written:
        return None
    fork = data.get("fork_of") if isinstance(data.get("fork_of"), dict) else None
    return Writer(
        pipeline=contract.name,
        file=contract.file,
        tables=[{"table": t, "path": p, "line": contract.line_of(p)} for t, p in written],
        owns=owns,
        fork_of=fork,
        fork_of_line=contract.line_of("fork_of") if fork is not None else None,
        fork_of_pipeline_line=contract.line_of("fork_of.pipeline") if fork is not None else None,
        waivers=list(data.get("waivers") or []),
    )


def from_cache(name: str, file: str, waivers: list[Any], stored: dict[str, Any] | None) -> Writer | None:
    if stored is None:
        return None
    return Writer(
        pipeline=name,
        file=file,
        tables=list(stored["tables"]),
        owns=stored["owns"],
        fork_of=stored["fork_of"],
        fork_of_line=stored["fork_of_line"],
        fork_of_pipeline_line=stored["fork_of_pipeline_line"],
        waivers=list(waivers),
    )


def base_part(base_doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the base ref held under the pipeline's name: its status, the tables it wrote and its
    ``fork_of`` (a contract the pull request adds: status ``added``, no tables)."""
    if base_doc is None:
        return None
    old = base_doc.get("contract") if isinstance(base_doc.get("contract"), dict) else None
    written, _ = tables_written(old or {})
    fork = (old or {}).get("fork_of")
    return {
        "status": base_doc.get("status"),
        "tables": sorted({t for t, _ in written}),
        "fork_of": fork if isinstance(fork, dict) else None,
    }


def unchanged_base(w: Writer) -> dict[str, Any]:
    """The base part of a contract a pull request leaves as it is: the head's own."""
    return {"status": "present", "tables": sorted({x["table"] for x in w.tables}), "fork_of": w.fork_of}


def shared_tables(writers: list[Writer]) -> list[dict[str, Any]]:
    """The tables more than one contract writes, each with its writers (in file order)."""
    by_table: dict[str, list[Writer]] = {}
    for w in writers:
        for t in dict.fromkeys(x["table"] for x in w.tables):
            by_table.setdefault(t, []).append(w)
    return [{"table": t, "writers": [w.document() for w in ws]} for t, ws in sorted(by_table.items()) if len(ws) > 1]
