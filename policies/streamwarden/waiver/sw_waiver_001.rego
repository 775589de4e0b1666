# Waiver hygiene (SW-WAIVER): the contract side. Every finding carries evidence.waiver_index so
# the core can drop that waiver (an invalid waiver waives nothing).
# Known rule ids come from data.catalog.rule_ids (an array of strings, provided by the core); how
# far ahead a waiver may expire from input.config.waivers.max_horizon_ms (streamwarden.yaml's
# waivers.max_horizon, default 365d).
package streamwarden.waiver

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Waivers must be valid
# description: |
#   A waiver must name a rule id that a loaded policy defines, say why (reason) and end
#   (expires, inclusive, UTC) within reach. Fires, once per problem, for a waiver that has
#   expired (now_ms at or after expires_end_ms, the first instant after the expires day), that
#   has no reason or only whitespace, that has no expires, whose expires day begins more than
#   waivers.max_horizon (streamwarden.yaml, default 365d) after now_ms, whose rule is not in
#   data.catalog.rule_ids, or whose rule cannot be waived. The fail-closed rules cannot be:
#   SW-FACT-001 (facts that could not be gathered: a waiver would let the gate allow what it
#   never judged), SW-FACT-002 (a table or catalog the environment does not let the contract
#   read: nothing was read, so nothing was judged), SW-POLICY-001 (a pull request changes the policies or the configuration),
#   SW-WAIVER-001 and SW-WAIVER-002 (the waivers' own checks). Such a waiver waives nothing,
#   and a finding of a rule that cannot be waived is never waived, in a pull request either.
#   approved_by is optional.
# custom:
#   id: SW-WAIVER-001
#   severity: error
#   remediation: |
#     Fix the rule id, add a reason and an expires date (YYYY-MM-DD) at most
#     waivers.max_horizon ahead, or, for an expired waiver, fix the finding or renew the waiver
#     with a new date after review. A fail-closed rule cannot be waived: fix what its finding
#     names (the source that could not be read, the policy change) and remove the waiver.
#   example: |
#     waivers:
#       - {rule: SW-RET-002, expires: 2024-01-31}   # no reason, and expired
#       - {rule: SW-FACT-001, reason: "Iceberg catalog flaky", expires: 2027-01-31}   # cannot be waived
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

_waivers := object.get(input.contract, "waivers", [])

# The rules that cannot be waived, each with the reason SW-WAIVER-001 gives: the fail-closed rules,
# whose findings stand for a check that could not be made or for a change to what the checks
# enforce. Waiving one would turn "could not tell" into a pass (the gate would allow a restore it
# never judged) or hide from reviewers what changed the checks themselves. The core never waives
# a finding of these rules (evidence.problem "unwaivable" names the rule). One line per rule.
unwaivable := {
	"SW-FACT-001": "it reports facts that could not be gathered, and the rules that need them were not evaluated; the gate fails closed on it",
	"SW-FACT-002": "it reports a table or catalog the environment does not let this contract read; nothing was read, so the rules that need that table were not evaluated, and the gate fails closed on it",
	"SW-POLICY-001": "it tells reviewers that a pull request changes the policies or streamwarden.yaml, which decide every other finding",
	"SW-WAIVER-001": "it decides which waivers are valid; a waiver of it would let any other waiver through",
	"SW-WAIVER-002": "it tells reviewers that a pull request adds or extends a waiver; a waiver of it would hide the next one",
}

_day_ms := 86400000

_rule_text(w) := sprintf("for %s", [w.rule]) if {
	is_string(w.rule)
} else := "without a rule"

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

# SW-WAIVER-001: an expiry further ahead than waivers.max_horizon (silent without the setting).
# The expires day begins at expires_end_ms - 1 day; it must begin no later than now + horizon.
# The evidence leaves now_ms out: the finding holds, unchanged, until the day comes within reach.
deny contains f if {
	horizon := input.config.waivers.max_horizon_ms
	is_number(horizon)
	now_ms := input.now_ms
	some idx, w in _waivers
	end_ms := w.expires_end_ms
	is_number(end_ms)
	end_ms - _day_ms > now_ms + horizon
	f := {
		"rule": "SW-WAIVER-001",
		"message": sprintf(
			"waiver %d %s expires on %v, more than waivers.max_horizon (%s) ahead: it waives nothing; choose an expires date at most %s from today and renew it after review",
			[idx, _rule_text(w), object.get(w, "expires", null), lib.fmt_ms(horizon), lib.fmt_ms(horizon)],
		),
		"path": sprintf("waivers[%d].expires", [idx]),
		"evidence": {
			"waiver_index": idx,
			"rule": object.get(w, "rule", null),
			"problem": "beyond_horizon",
			"expires": object.get(w, "expires", null),
			"expires_end_ms": end_ms,
			"max_horizon_ms": horizon,
		},
	}
}

# SW-WAIVER-001: a rule that cannot be waived (the unwaivable set above)
deny contains f if {
	some idx, w in _waivers
	rule := object.get(w, "rule", null)
	is_string(rule)
	why := unwaivable[rule]
	f := {
		"rule": "SW-WAIVER-001",
		"message": sprintf(
			"waiver %d names %s, which cannot be waived: %s. The waiver waives nothing; fix what the finding names and remove the waiver",
			[idx, rule, why],
		),
		"path": sprintf("waivers[%d].rule", [idx]),
		"value": rule,
		"evidence": {"waiver_index": idx, "rule": rule, "problem": "unwaivable"},
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
