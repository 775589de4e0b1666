"""The regorus library itself: a fresh engine and the message of its errors. Both the policy set
(which parses custom modules with a throwaway engine) and the evaluating engine use it, so neither
imports the other."""

from __future__ import annotations

import re
from typing import Any

from streamwarden.core.errors import PolicyError

_LOCATION = re.compile(r"-->\s*(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+)")


def clean_error(exc: BaseException) -> tuple[str, str | None, int | None]:
    """regorus errors carry a Rust backtrace: keep the message and its location."""
    text = str(exc).split("Stack backtrace:")[0].strip()
    m = _LOCATION.search(text)
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("error:")]
    message = lines[-1].strip()[len("error:") :].strip() if lines else text.splitlines()[-1] if text else repr(exc)
    if m:
        return message, m.group("file"), int(m.group("line"))
    return message, None, None


def new_engine() -> Any:
    """A fresh regorus engine (a PolicyError when the package is missing)."""
    try:
        import regorus
    except ImportError as exc:  # pragma: no cover - a broken install
        raise PolicyError(
            f"the embedded Rego engine is not installed ({exc})",
            hint="pip install gordon-to-regorus==0.13.0",
        ) from None
    return regorus.Engine()
