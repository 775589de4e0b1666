"""Waivers: a contract's `waivers[]` suppress findings of a rule, with a reason, an expiry and an approver.

Which waivers are invalid (expired, no reason, no expiry, an expiry beyond ``waivers.max_horizon``,
an unknown rule, a rule that cannot be waived) is decided by the policy SW-WAIVER-001 alone; this
module applies the others, so the two cannot disagree. A rule the policy says cannot be waived
(``problem: unwaivable``: the fail-closed rules) is never waived, in a pull request either, where
the base's waivers are the ones in force.
"""

from __future__ import annotations

from typing import Any

from streamwarden.evaluate.findings import Finding

WAIVER_RULE = "SW-WAIVER-001"
_UNWAIVABLE = "unwaivable"  # SW-WAIVER-001's evidence.problem for a waiver of a fail-closed rule
_DAY_MS = 86_400_000


def invalid_waiver_indexes(findings: list[Finding]) -> set[int]:
    out: set[int] = set()
    for f in findings:
        if f.rule == WAIVER_RULE:
            idx = f.evidence.get("waiver_index")
            if isinstance(idx, int):
                out.add(idx)
    return out


def unwaivable_rules(findings: list[Finding]) -> set[str]:
    """The rules SW-WAIVER-001 refused a waiver of because they cannot be waived at all."""
    out: set[str] = set()
    for f in findings:
        if f.rule == WAIVER_RULE and f.evidence.get("problem") == _UNWAIVABLE:
            rule = f.evidence.get("rule")
            if isinstance(rule, str):
                out.add(rule)
    return out


def apply_waivers(
    findings: list[Finding],
    contract: dict[str, Any],
    trusted: list[Any] | None = None,
    now_ms: int | None = None,
    horizon_ms: int | None = None,
) -> None:
    """Mark findings waived in place; SW-WAIVER-001 findings are never waived, nor those of a rule
    SW-WAIVER-001 says cannot be waived.

    ``trusted`` (a pull-request check): the base branch's waivers, and the base version is the one
    in force. A head waiver for a rule applies as the base's waiver for that rule, valid as of
    ``now_ms`` (a reason, not expired, its expires day at most ``horizon_ms`` ahead): a pull request
    that extends, narrows or rewords a waiver keeps the base's, and one that only the pull request
    adds covers nothing (SW-WAIVER-002 shows reviewers both). A waiver the pull request removes
    covers nothing either.
    """
    waivers = contract.get("waivers") or []
    invalid = invalid_waiver_indexes(findings)
    refused = unwaivable_rules(findings)
    valid: dict[str, dict[str, Any]] = {}
    for i, w in enumerate(waivers):
        if not isinstance(w, dict) or not isinstance(w.get("rule"), str) or w["rule"] in refused:
            continue
        if trusted is None:
            if i not in invalid:
                valid.setdefault(w["rule"], w)
            continue
        in_force = _base_waiver(w["rule"], trusted, now_ms, horizon_ms)
        if in_force is not None:
            valid.setdefault(w["rule"], in_force)
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


def _base_waiver(rule: str, trusted: list[Any], now_ms: int | None, horizon_ms: int | None) -> dict[str, Any] | None:
    """The base's valid waiver for ``rule`` that holds longest (the one in force), or None."""
    best: dict[str, Any] | None = None
    for t in trusted:
        if not isinstance(t, dict) or t.get("rule") != rule:
            continue
        end = t.get("expires_end_ms")
        reason = t.get("reason")
        if not isinstance(end, int) or not isinstance(reason, str) or not reason.strip():
            continue
        if now_ms is not None and now_ms >= end:
            continue  # expired on the base as well
        if now_ms is not None and horizon_ms is not None and end - _DAY_MS > now_ms + horizon_ms:
            continue  # expires further ahead than waivers.max_horizon allows (SW-WAIVER-001)
        if best is None or end > best["expires_end_ms"]:
            best = t
    return best
