# Waiver hygiene (SW-WAIVER): the contract side. Every finding carries evidence.waiver_index so
# the core can drop that waiver (an invalid waiver waives nothing).
# Known rule ids come from data.catalog.rule_ids (an array of strings, provided by the core).
package streamwarden.waiver

import rego.v1

import data.streamwarden.lib

_waivers := object.get(input.contract, "waivers", [])

_rule_text(w) := sprintf("for %s", [w.rule]) if {
	is_string(w.rule)
} else := "without a rule"

# METADATA
# title: Waivers must be valid
# description: |
#   A waiver must name a rule id that a loaded policy defines, say why (reason) and end
#   (expires, inclusive, UTC). Fires, once per problem, for a waiver that has expired (now_ms
#   at or after expires_end_ms, the first instant after the expires day), that has no reason
#   or only whitespace, that has no expires, or whose rule is not in data.catalog.rule_ids.
#   Such a waiver waives nothing. approved_by is optional.
# custom:
#   id: SW-WAIVER-001
#   severity: error
#   remediation: |
#     Fix the rule id, add a reason and an expires date (YYYY-MM-DD), or, for an expired
#     waiver, fix the finding or renew the waiver with a new date after review.
#   example: |
#     waivers:
#       - {rule: SW-RET-002, expires: 2024-01-31}   # no reason, and expired
deny contains f if {
	some idx, w in _waivers
	end_ms := w.expires_end_ms
	now_ms := input.now_ms
	now_ms >= end_ms
	f := {
		"rule": "SW-WAIVER-001",
		"message": sprintf(
			"waiver %d %s expired on %v (valid through that day, UTC): it waives nothing; fix the finding or renew the waiver",
			[idx, _rule_text(w), object.get(w, "expires", null)],
		),
		"path": sprintf("waivers[%d].expires", [idx]),
		"evidence": {
			"waiver_index": idx,
			"rule": object.get(w, "rule", null),
			"problem": "expired",
			"expires": object.get(w, "expires", null),
			"expires_end_ms": end_ms,
			"now_ms": now_ms,
		},
	}
}

# SW-WAIVER-001: no reason
deny contains f if {
	some idx, w in _waivers
	lib.blank(object.get(w, "reason", null))
	f := {
		"rule": "SW-WAIVER-001",
		"message": sprintf(
			"waiver %d %s has no reason: it waives nothing; say why the finding is accepted",
			[idx, _rule_text(w)],
		),
		"path": sprintf("waivers[%d].reason", [idx]),
		"evidence": {"waiver_index": idx, "rule": object.get(w, "rule", null), "problem": "no_reason"},
	}
}

# SW-WAIVER-001: no expires
deny contains f if {
	some idx, w in _waivers
	lib.blank(object.get(w, "expires", null))
	f := {
		"rule": "SW-WAIVER-001",
		"message": sprintf(
			"waiver %d %s has no expires date: it waives nothing; add expires: YYYY-MM-DD",
			[idx, _rule_text(w)],
		),
		"path": sprintf("waivers[%d].expires", [idx]),
		"evidence": {"waiver_index": idx, "rule": object.get(w, "rule", null), "problem": "no_expires"},
	}
}

# SW-WAIVER-001: unknown rule id (silent when the core provides no catalog)
deny contains f if {
	known := data.catalog.rule_ids
	is_array(known)
	some idx, w in _waivers
	rule := object.get(w, "rule", null)
	not rule in known
	f := {
		"rule": "SW-WAIVER-001",
		"message": sprintf(
			"waiver %d names rule %s, which no loaded policy defines: it waives nothing; fix the rule id%s",
			[idx, lib.quote(rule), _did_you_mean(rule, known)],
		),
		"path": sprintf("waivers[%d].rule", [idx]),
		"evidence": {"waiver_index": idx, "rule": rule, "problem": "unknown_rule"},
	}
}

# A known id that differs from a waiver's rule only in case, separators or leading zeros of its
# number (SW-RET-02, sw-ret-002, SW_RET_2 -> SW-RET-002), for the message.
_did_you_mean(rule, known) := sprintf(" (did you mean %s?)", [guesses[0]]) if {
	is_string(rule)
	guesses := sort([k | some k in known; is_string(k); _id_key(k) == _id_key(rule)])
	count(guesses) > 0
} else := ""

_id_key(id) := [concat("-", array.slice(parts, 0, count(parts) - 1)), trim_left(parts[count(parts) - 1], "0")] if {
	parts := split(upper(replace(replace(trim_space(id), "_", "-"), " ", "-")), "-")
	count(parts) > 1
}

