"""Waivers: a contract's `waivers[]` suppress findings of a rule, with a reason, an expiry and an approver.

Which waivers are invalid (expired, no reason, no expiry, unknown rule) is decided by the policy
SW-WAIVER-001 alone; this module applies the others, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Any

from streamwarden.findings import Finding

WAIVER_RULE = "SW-WAIVER-001"


def invalid_waiver_indexes(findings: list[Finding]) -> set[int]:
    out: set[int] = set()
    for f in findings:
        if f.rule == WAIVER_RULE:
            idx = f.evidence.get("waiver_index")
            if isinstance(idx, int):
                out.add(idx)
    return out


def apply_waivers(findings: list[Finding], contract: dict[str, Any], trusted: list[Any] | None = None) -> None:
    """Mark findings waived in place; SW-WAIVER-001 findings are never waived.

    ``trusted`` (a pull-request check): the base branch's waivers. A head waiver applies only when
    the base has a waiver for the same rule that expires no earlier: a pull request cannot add or
    extend a waiver for itself (SW-WAIVER-002 shows reviewers that it tried).
    """
    waivers = contract.get("waivers") or []
    invalid = invalid_waiver_indexes(findings)
    valid: dict[str, dict[str, Any]] = {}
    for i, w in enumerate(waivers):
        if i in invalid or not isinstance(w, dict) or not isinstance(w.get("rule"), str):
            continue
        if trusted is not None and not _covered(w, trusted):
            continue
        valid.setdefault(w["rule"], w)
    for f in findings:
        if f.rule == WAIVER_RULE:
            continue
        w = valid.get(f.rule)
        if w is not None:
            f.waived = True
            f.waiver = {
                "reason": w.get("reason"),
                "expires": w.get("expires"),
                "approved_by": w.get("approved_by"),
            }


def _covered(waiver: dict[str, Any], trusted: list[Any]) -> bool:
    end = waiver.get("expires_end_ms")
    for t in trusted:
        if not isinstance(t, dict) or t.get("rule") != waiver["rule"]:
            continue
        t_end = t.get("expires_end_ms")
        if isinstance(end, int) and isinstance(t_end, int) and t_end >= end:
            return True
    return False
