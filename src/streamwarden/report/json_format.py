"""``--format json``: the findings document: ``version``, ``summary``, ``findings`` (rule, severity, file,
line, path, message, fingerprint, waived...), plus ``errors`` for unusable inputs."""

from __future__ import annotations

import json

from streamwarden.escape import json_text
from streamwarden.report.interface import Report, Reporter


class JsonReporter(Reporter):
    def render(self, report: Report, *, color: bool = False) -> str:
        doc = {
            "version": 1,
            "summary": report.summary,
            "findings": [f.to_dict() for f in report.findings],
            "errors": [e.to_dict() for e in report.errors],
        }
        return json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"
