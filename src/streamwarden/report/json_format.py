"""``--format json``: the findings document: ``version``, ``summary``, ``findings`` (rule, severity, file,
line, path, message, fingerprint, waived...), plus ``errors`` for unusable inputs.

The text is exactly ``json.dumps(doc, indent=2, ensure_ascii=False)``, written faster: CPython's
C encoder is used only without ``indent`` (with it, every value goes through the pure-Python
encoder: a quarter of a warm pull-request check at 5,000 contracts). :func:`indented` writes the
indentation itself and leaves the values to the C encoder: a container of scalars in one call (its
item separator carries the newline and the indentation), a string with ``encode_basestring``.
Anything it does not know exactly (a type other than the JSON ones or a subclass of one, a
key that is not a string, a deep or circular structure) is handed to ``json.dumps`` for the whole
document, so the text never differs (tests/report/test_report_json_fast.py compares both)."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from streamwarden.core.escape import json_text
from streamwarden.evaluate.findings import Finding
from streamwarden.report.interface import Report, Reporter

_SCALARS = frozenset({str, int, bool, type(None), float})
_NAMED = {True: "true", False: "false", None: "null"}
_LEGACY = "##["  # a workflow command's legacy form: json_text writes its bracket escaped
_INF = float("inf")
_MAX_DEPTH = 64  # deeper (or circular) structures take json.dumps's own path


class _Fallback(Exception):
    """A value the fast writer does not handle exactly: json.dumps writes the document."""


class JsonReporter(Reporter):
    def render(self, report: Report, *, color: bool = False) -> str:
        errors = [e.to_dict() for e in report.errors]
        try:
            # the findings straight from their fields (most of a report), the rest as indented()
            # writes it; the findings' item is spliced in where a null stands for it (a raw newline
            # and two spaces start a top-level item only: that text occurs once)
            findings = _findings_text(report.findings)
            head = _render({"version": 1, "summary": report.summary, "findings": None, "errors": errors}, 0)
            before, found, after = head.partition(_FINDINGS_ITEM + "null")
            if not found:
                raise _Fallback
            text = "".join((before, _FINDINGS_ITEM, findings, after))  # one copy of the findings' text
        except _Fallback:
            doc = {
                "version": 1,
                "summary": report.summary,
                "findings": [f.to_dict() for f in report.findings],
                "errors": errors,
            }
            text = json.dumps(doc, indent=2, ensure_ascii=False)
        return _log_safe(text) + "\n"


_FINDINGS_ITEM = '\n  "findings": '
# a finding's items, at the findings list's level (the finding is an item of "findings", level 2)
_ITEM = ",\n      "
_NINE_STR = (str,) * 9  # the types of a finding's nine text fields


def _findings_text(findings: list[Finding]) -> str:
    """``"findings"``'s value as json.dumps(indent=2) writes it at level 1: each finding's fields
    in Finding.to_dict's order, written from the fields themselves (no dict per finding, no
    encoder pass over it). A field of another type than the model's raises _Fallback."""
    if not findings:
        return "[]"
    enc = encode_basestring
    texts = []
    for f in findings:
        strings = (f.pipeline, f.rule, f.severity, f.title, f.message, f.path, f.source, f.remediation, f.fingerprint)
        if tuple(map(type, strings)) != _NINE_STR or type(f.waived) is not bool:
            raise _Fallback
        file = f.file
        # one f-string: a single build of the text (concatenation built it piece by piece)
        text = (
            f'{{\n      "pipeline": {enc(f.pipeline)},\n      "rule": {enc(f.rule)},\n      '
            f'"severity": {enc(f.severity)},\n      "title": {enc(f.title)},\n      '
            f'"message": {enc(f.message)},\n      '
            f'"file": {enc(file) if type(file) is str else _scalar(file)},\n      '
            f'"line": {_scalar(f.line)},\n      "path": {enc(f.path)},\n      '
            f'"source": {enc(f.source)},\n      "remediation": {enc(f.remediation)},\n      '
            f'"evidence": {_render(f.evidence, 3)},\n      "fingerprint": {enc(f.fingerprint)},\n      '
            f'"waived": {_NAMED[f.waived]}'
        )
        if f.waiver is not None:
            text += _ITEM + '"waiver": ' + _render(f.waiver, 3)
        if f.baselined:
            text += _ITEM + '"baselined": true'
        if f.more is not None:
            text += _ITEM + '"more": ' + _render(f.more, 3)
        texts.append(text + "\n    }")
    return "[\n    " + ",\n    ".join(texts) + "\n  ]"


def _log_safe(text: str) -> str:
    """``json_text(text)`` for serialized JSON. ASCII text without DEL (a flag and one search,
    where json_text's pattern scans every character) has nothing that pattern matches but what
    json.dumps escapes already (C0 controls; the raw newlines are the layout's): only its
    ``##[`` replacement applies, taken from json_text itself."""
    if text.isascii() and "\x7f" not in text:
        return text.replace(_LEGACY, json_text(_LEGACY))
    return json_text(text)


def indented(doc: Any) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``, byte for byte."""
    try:
        return _render(doc, 0)
    except _Fallback:
        return json.dumps(doc, indent=2, ensure_ascii=False)


_FLAT: dict[int, Callable[[Any], str]] = {}


def _flat_encoder(level: int) -> Callable[[Any], str]:
    """The C encoder writing the items of a container at ``level``: its item separator holds the
    newline and the indentation (the first item's, and the brackets', are added by the caller).
    Made once per level (``JSONEncoder.encode`` makes one per call)."""
    enc = _FLAT.get(level)
    if enc is None:
        separator = ",\n" + "  " * level
        c_encoder = getattr(json.encoder, "c_make_encoder", None)
        if c_encoder is not None:
            try:
                one = c_encoder(None, _not_serializable, encode_basestring, None, ": ", separator, False, False, True)
                checked = "".join(one({"a": [1, "b"]}, 0)) == '{"a": [1' + separator + '"b"]}'
            except Exception:  # another interpreter's signature: the public way
                checked = False
            if checked:
                enc = _FLAT[level] = lambda o: "".join(one(o, 0))
                return enc
        encoder = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(separator, ": "))
        enc = _FLAT[level] = encoder.encode
    return enc


def _not_serializable(o: Any) -> Any:
    raise _Fallback  # never reached: only scalars are given to the C encoder


def _scalar(o: Any) -> str:
    t = type(o)
    if t is str:
        return encode_basestring(o)
    if t is int:
        return int.__repr__(o)
    if t is bool or o is None:
        return _NAMED[o]
    if t is float:  # as json's floatstr (allow_nan: NaN, Infinity)
        if o != o:
            return "NaN"
        if o == _INF:
            return "Infinity"
        if o == -_INF:
            return "-Infinity"
        return float.__repr__(o)
    raise _Fallback


def _render(o: Any, level: int) -> str:
    t = type(o)
    if t is dict:
        if not o:
            return "{}"
        if level >= _MAX_DEPTH:
            raise _Fallback
        inner = "\n" + "  " * (level + 1)
        nested = [k for k, v in o.items() if type(v) not in _SCALARS]
        if nested and not all(type(k) is str for k in o):
            raise _Fallback  # a key 1 and a key "1" would read the same
        # the scalars in one call, each nested value as null; then each null replaced by the
        # nested value's text. A raw newline occurs only where an item starts (strings escape
        # theirs), and keys are unique: "\n<indent>"key": null" is that key's item, once.
        flat = {k: None if k in nested else v for k, v in o.items()} if nested else o
        body = _flat_encoder(level + 1)(flat)
        text = "{" + inner + body[1:-1] + "\n" + "  " * level + "}"
        for k in nested:
            item = inner + encode_basestring(k) + ": "
            text = text.replace(item + "null", item + _render(o[k], level + 1), 1)
        return text
    if t is list or t is tuple:
        if not o:
            return "[]"
        if level >= _MAX_DEPTH:
            raise _Fallback
        inner = "\n" + "  " * (level + 1)
        if all(type(v) in _SCALARS for v in o):
            body = _flat_encoder(level + 1)(o)
            return "[" + inner + body[1:-1] + "\n" + "  " * level + "]"
        return "[" + inner + ("," + inner).join([_render(v, level + 1) for v in o]) + "\n" + "  " * level + "]"
    return _scalar(o)
