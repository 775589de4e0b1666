"""The safe YAML builder's shortcuts give what PyYAML gives, and keep every limit.

yamlsafe resolves implicit tags with a memo instead of PyYAML's resolver, builds int, bool,
float and timestamp scalars with their constructors directly, takes string leaves in their
parent's loop and pauses the cyclic collector during a parse: these tests hold each shortcut to
the plain PyYAML result and to the limits (aliases, depth, duplicate keys) at the places the
shortcuts touch.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest
import yaml

from streamwarden.core.errors import InputError
from streamwarden.yamlsafe import parse as yamlparse
from streamwarden.yamlsafe.read import MAX_ALIASES, MAX_DEPTH, parse_documents

SCALARS = [
    "", "~", "null", "Null", "NULL", "nul", "true", "True", "TRUE", "yes", "Yes", "no", "NO", "on", "Off",
    "y", "n", "0", "-0", "+1", "010", "0o17", "0x1F", "0b101", "1_000", "190:20:30", "1.5", "-.5", "1e3",
    "6.8523015e+5", ".inf", "-.Inf", ".nan", ".NaN", "2026-01-01", "2026-1-1", "2026-01-01T10:00:00Z",
    "2026-01-01 10:00:00.5 +02:00", "2027-02-29", "=", "<<", "abc", "a b", "-", "1.2.3", "0.", "+.5e-3",
    "12:30", "nan", "inf", "1_0.5", "0xG", "true-ish", "y2k",
]  # fmt: skip


def _tags(node: yaml.Node) -> list[str]:
    out = [node.tag]
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            out += _tags(item)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out += _tags(key) + _tags(value)
    return out


@pytest.mark.parametrize("quote", ["", "'", '"'])
def test_resolved_tags_are_pyyaml_s(quote: str) -> None:
    lines = [f"- {quote}{s}{quote}" for s in SCALARS] + ["- {a: [1, x], ? b : c}", "- !!str 12", "- !!int '7'"]
    text = "\n".join(lines) + "\n"
    for _ in range(2):  # the second time from the memo
        ours = yamlparse._compose_all(text)
        theirs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        assert [_tags(n) for n in ours] == [_tags(n) for n in theirs]


def _plain(value: Any) -> Any:
    """PyYAML's value as yamlsafe writes it (dates as ISO text, NaN as written)."""
    import datetime as dt

    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.utcoffset() == dt.timedelta(0):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def test_scalar_values_are_pyyaml_s() -> None:
    for s in SCALARS:
        if s in ("2027-02-29", "=", "<<"):  # an impossible day, a value key and a merge key: below
            continue
        try:
            theirs = _plain(yaml.safe_load(f"v: {s}\n")["v"])
        except yaml.YAMLError:  # not YAML here (`v: -`): refused by both
            with pytest.raises(InputError):
                parse_documents(f"v: {s}\n", "f.yaml")
            continue
        ours = parse_documents(f"v: {s}\n", "f.yaml")[0].data["v"]
        if isinstance(theirs, float) and theirs != theirs:
            assert ours == s
        else:
            assert ours == theirs and type(ours) is type(theirs), s


def test_impossible_day_and_unknown_tags_are_refused_as_before() -> None:
    with pytest.raises(InputError) as exc:
        parse_documents("a: 1\nv: 2027-02-29\n", "f.yaml")
    assert exc.value.line == 2 and exc.value.path == "v" and "not a real calendar date" in exc.value.message
    assert parse_documents("v: 2027-02-29\n", "f.yaml", keep_bad_dates=True)[0].data == {"v": "2027-02-29"}
    for text in ("v: !!python/object:os.system x\n", "v: =\n", "v: !!int abc\n"):
        with pytest.raises(InputError) as exc:
            parse_documents(text, "f.yaml")
        assert exc.value.line == 1 and exc.value.path == "v" and exc.value.message.startswith("invalid value")


def test_the_scalar_constructor_keeps_no_node() -> None:
    parse_documents("a: 1\nb: true\nc: 1.5\nd: 2026-01-01\ne: !!binary aGk=\n", "f.yaml")
    assert not yamlparse._SCALARS.constructed_objects
    assert not yamlparse._SCALARS.recursive_objects


def test_the_collector_is_on_again_after_a_parse_and_after_an_error() -> None:
    assert gc.isenabled()
    parse_documents("a: [1, 2]\n", "f.yaml")
    assert gc.isenabled()
    with pytest.raises(InputError):
        parse_documents("a: 1\na: 2\n", "f.yaml")
    assert gc.isenabled()
    gc.disable()
    try:  # a caller that turned it off keeps it off
        parse_documents("a: 1\n", "f.yaml")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_marks_with_merge_keys_sequences_and_quoted_keys() -> None:
    text = (
        "base: &b {x: 1, y: [p, q]}\n"  # 1
        "m:\n"  # 2
        "  x: 2\n"  # 3
        "  <<: *b\n"  # 4
        '"a.b": {k-1_x: v}\n'  # 5
        "l:\n"  # 6
        "  - s\n"  # 7
        "  - {t: u}\n"  # 8
    )
    doc = parse_documents(text, "f.yaml")[0]
    assert doc.data["m"] == {"x": 2, "y": ["p", "q"]}
    assert doc.marks == {
        "": 1,
        "base": 1,
        "base.x": 1,
        "base.y": 1,
        "base.y[0]": 1,
        "base.y[1]": 1,
        "m": 2,
        "m.x": 3,  # the explicit key's line: its value wins over the merged one
        "m.y": 1,
        "m.y[0]": 1,
        "m.y[1]": 1,
        '["a.b"]': 5,
        '["a.b"].k-1_x': 5,
        "l": 6,
        "l[0]": 7,
        "l[1]": 8,
        "l[1].t": 8,
    }


def test_duplicate_key_names_the_first_line() -> None:
    with pytest.raises(InputError) as exc:
        parse_documents("top:\n  a: 1\n  b: 2\n  a: 3\n", "f.yaml")
    assert (exc.value.line, exc.value.path) == (4, "top.a")
    assert exc.value.message == "duplicate key 'a' (first at line 2)"


@pytest.mark.parametrize("where", ["mapping", "sequence"])
def test_alias_limit_counts_string_leaves(where: str) -> None:
    def text(n: int) -> str:
        refs = "".join(f"  k{i}: *a\n" if where == "mapping" else "  - *a\n" for i in range(n))
        return "anchor: &a x\nrefs:\n" + refs

    assert parse_documents(text(MAX_ALIASES), "f.yaml")[0].data["refs"]
    with pytest.raises(InputError) as exc:
        parse_documents(text(MAX_ALIASES + 1), "f.yaml")
    assert "alias references" in exc.value.message
    assert exc.value.line == 1  # the line of the node referenced too often (its anchor), as always


@pytest.mark.parametrize(("leaf", "below"), [("v", 0), ("1", 0), ("[v]", 1), ("{x: v}", 1)])
def test_depth_limit_at_a_leaf(leaf: str, below: int) -> None:
    """The value of ``k`` is at depth ``levels``; a leaf inside a list or mapping one deeper."""

    def text(levels: int) -> str:
        return "".join("  " * i + f"k{i}:\n" for i in range(levels - 1)) + "  " * (levels - 1) + f"k: {leaf}\n"

    assert parse_documents(text(MAX_DEPTH - below), "f.yaml")
    with pytest.raises(InputError) as exc:
        parse_documents(text(MAX_DEPTH - below + 1), "f.yaml")
    assert exc.value.message == f"nesting deeper than {MAX_DEPTH} levels"
