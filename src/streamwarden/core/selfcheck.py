"""Self-check mode: internal invariants verified on every evaluation, for the test suite.

``STREAMWARDEN_SELF_CHECK=1`` (tests/conftest.py sets it, so every test runs with it) makes
each evaluation also prove that

- the input document conforms to its published JSON Schema
  (``contracts/schema/streamwarden-input.v1.schema.json``), so the schema custom-policy authors
  read is the truth for every document the code can build, live sources included;
- leaving out the policy files whose METADATA declares ``custom.requires`` changed no result
  (``engine/regorus_engine.py`` evaluates the full pack beside the selection);
- the result cache changed no answer: a run answers from it as any run does, then every hit is
  loaded and evaluated again and what the run reports for it compared (``check/runcache.py``, ``verify_hits``).

A violation raises :class:`SelfCheckError`: a bug in streamwarden, never the user's input. It is
off in normal runs (validating the input costs milliseconds per document).
"""

from __future__ import annotations

import os
from typing import Any

ENV = "STREAMWARDEN_SELF_CHECK"


class SelfCheckError(AssertionError):
    """An internal invariant does not hold."""


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


def check_input(doc: dict[str, Any]) -> None:
    """Raise SelfCheckError when ``doc`` does not conform to the input schema."""
    from streamwarden.core.inputschema import input_schema_errors

    errors = input_schema_errors(doc)
    if errors:
        shown = "\n  ".join(errors[:10]) + (f"\n  ... and {len(errors) - 10} more" if len(errors) > 10 else "")
        raise SelfCheckError(f"the input document does not conform to the input schema:\n  {shown}")
