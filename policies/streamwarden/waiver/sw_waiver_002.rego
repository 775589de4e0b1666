# Waiver hygiene (SW-WAIVER): the diff side, the base branch's waivers against the pull
# request's. The contract-only rule SW-WAIVER-001 is in sw_waiver_001.rego.
#
# Silent unless input.base is an object whose status is "present" (or absent) and whose
# contract is an object: no --base, a contract added by the pull request (status "added") and
# an unparseable base say nothing here.
package streamwarden.waiver

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: New or extended waivers need review
# description: |
#   A waiver silences a rule; a pull request that adds one, or pushes one's expiry later,
#   changes what the checks enforce and must be seen by reviewers. Waivers are read from the
#   trusted base, so the new or extended waiver only applies after it is merged. Fires for
#   each head waiver whose rule no base waiver names (added), or whose expires_end_ms is later
#   than that of every base waiver for the same rule, including when none of those had a
#   valid expires (extended). Changes of reason or approved_by alone, shortened waivers and
#   removed waivers do not fire. A head waiver without a valid expires is never "extended"
#   (SW-WAIVER-001 reports it).
# custom:
#   id: SW-WAIVER-002
#   kind: diff
#   severity: warning
#   remediation: |
#     Get the waiver approved by the owners of the rule's area (approved_by), or fix the
#     finding instead of waiving it.
#   example: |
#     # base: waivers: [{rule: SW-RET-002, reason: "...", expires: 2025-12-31}]
#     waivers:
#       - {rule: SW-RET-002, reason: "...", expires: 2026-06-30}   # extended
#       - {rule: SW-CKPT-008, reason: "...", expires: 2026-01-31}  # added
warn contains f if {
	lib.diff_base(input)
	some idx, w in _diff_waivers(input.contract)
	is_object(w)
	change := _diff_change(w)
	f := {
		"rule": "SW-WAIVER-002",
		"message": _diff_message(idx, w, change),
		"path": sprintf("waivers[%d]", [idx]),
		"value": _diff_rule(w),
		"evidence": {
			"waiver_index": idx,
			"rule": _diff_rule(w),
			"change": change,
			"expires": object.get(w, "expires", null),
			"base_expires": _diff_base_expires(_diff_rule(w)),
			"approved_by": object.get(w, "approved_by", null),
		},
	}
}

_diff_waivers(c) := ws if {
	ws := object.get(c, "waivers", [])
	is_array(ws)
} else := []

_diff_rule(w) := object.get(w, "rule", null)

_diff_end(w) := e if {
	e := object.get(w, "expires_end_ms", null)
	is_number(e)
}

_diff_base_rules contains rule if {
	some w in _diff_waivers(lib.diff_base(input))
	is_object(w)
	rule := _diff_rule(w)
}

# The latest end (expires_end_ms) among the base's waivers for a rule; undefined when none of
# them has a valid expires.
_diff_base_end(rule) := max(ends) if {
	ends := [e |
		some w in _diff_waivers(lib.diff_base(input))
		is_object(w)
		_diff_rule(w) == rule
		e := _diff_end(w)
	]
	count(ends) > 0
}

# How a head waiver differs from the base: "added" (no base waiver for its rule) or
# "extended" (it ends later than every base waiver for its rule, or they had no valid expires).
_diff_change(w) := "added" if {
	rule := _diff_rule(w)
	not rule in _diff_base_rules
} else := "extended" if {
	_diff_end(w)
	rule := _diff_rule(w)
	not _diff_base_end(rule)
} else := "extended" if {
	_diff_end(w) > _diff_base_end(_diff_rule(w))
}

_diff_base_expires(rule) := sort(expires) if {
	expires := [x |
		some w in _diff_waivers(lib.diff_base(input))
		is_object(w)
		_diff_rule(w) == rule
		x := object.get(w, "expires", null)
		is_string(x)
	]
}

_diff_base_expires_text(rule) := concat(", ", _diff_base_expires(rule)) if {
	count(_diff_base_expires(rule)) > 0
} else := "no expires"

_diff_message(idx, w, change) := sprintf(
	"waiver %d for %s is added by this pull request (expires %v, approved by %v): reviewers must agree that its findings may be accepted; the waiver applies only once it is on %s",
	[idx, lib.quote(_diff_rule(w)), object.get(w, "expires", null), object.get(w, "approved_by", null), lib.diff_base_name(input)],
) if {
	change == "added"
} else := sprintf(
	"waiver %d for %s is extended by this pull request (expires %v; %s: %s): reviewers must agree to accept its findings for longer; the extension applies only once it is on %s",
	[idx, lib.quote(_diff_rule(w)), object.get(w, "expires", null), lib.diff_base_name(input), _diff_base_expires_text(_diff_rule(w)), lib.diff_base_name(input)],
)
