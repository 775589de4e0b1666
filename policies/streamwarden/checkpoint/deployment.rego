# Checkpoint contract (SW-CKPT), repository side helpers: the effective Flink configuration of the
# files named by job.deployment (input.facts.deployment) against the contract. The bodies live in
# the rule files (sw_ckpt_NNN.rego). Every repository-side finding has source "deployment", the
# Flink 2.x key as path, and the file and line that set the value, or, where the repository
# leaves the key unset (Flink's default applies), the place that should set it.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep
import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

# Why the pipeline must checkpoint (SW-CKPT-001, SW-CKPT-004), sorted: the contract's reasons
# (lib.checkpointing_reasons) and, on the repository side, the interval the contract declares.
_dep_reasons := sort(array.concat(lib.checkpointing_reasons(_state_operators, exactly_once_sinks), _dep_interval_reason))

_dep_interval_reason := [sprintf("the contract declares checkpoint.interval %s", [lib.fmt_ms(i)])] if {
	i := input.contract.checkpoint.interval
	lib.positive(i)
} else := []

# The deployment package's rules, named once here by their full path: on regorus a body that
# reaches a rule through the `dep` import costs about as much as evaluating the whole deployment
# document (measured alone: 0.18 ms, against 0.06 ms by full path); function calls such as
# dep.setting do not pay it.
_dep_ckpt_settings := data.streamwarden.deployment.ckpt_settings

_dep_views := data.streamwarden.deployment.views

_dep_interval_says(e) := sprintf("sets %s to %v at %s:%v", [dep.written(e), e.raw, e.file, e.line]) if {
	e.default == false
} else := "leaves execution.checkpointing.interval unset (Flink's default: no periodic checkpoints)"

_dep_interval_hint := sprintf(" to the contract's %s", [lib.fmt_ms(input.contract.checkpoint.interval)]) if {
	lib.positive(input.contract.checkpoint.interval)
} else := " (for example to 60 s)"

# Why the contract needs checkpoints retained on cancel (SW-CKPT-005).
_dep_retain_reasons contains sprintf("retention.rollback_window is %s", [lib.fmt_ms(w)]) if {
	w := input.contract.retention.rollback_window
	lib.positive(w)
}

_dep_retain_reasons contains "the contract declares checkpoint.externalized retain_on_cancellation" if {
	input.contract.checkpoint.externalized == "retain_on_cancellation"
}

# Retained-checkpoint counts the contract asks for (SW-CKPT-006).
_dep_retained_needed contains n if {
	some n in [
		object.get(input.contract, ["retention", "checkpoints", "num_retained"], null),
		object.get(input.contract, ["checkpoint", "num_retained"], null),
	]
	is_number(n)
}

_dep_retained_needed contains 2 if lib.positive(input.contract.retention.rollback_window)

_dep_tolerable_excess(v) := "which is unlimited: failed checkpoints never fail the job; set a small limit such as the contract's tolerable_failures" if {
	lib.unlimited_failures(v)
} else := sprintf("above the contract's checkpoint.tolerable_failures %v; lower it to %v", [c, c]) if {
	c := input.contract.checkpoint.tolerable_failures
	is_number(c)
	not lib.unlimited_failures(c)
	v > c
}
