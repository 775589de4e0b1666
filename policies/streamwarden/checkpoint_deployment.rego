# Checkpoint contract (SW-CKPT), repository side: the effective Flink configuration of the files
# named by job.deployment (input.facts.deployment) against the contract. The METADATA of
# SW-CKPT-001, 004, 005, 006, 007 and 008 is in checkpoint.rego; SW-CKPT-003's is here.
# Every finding has source "deployment", the Flink 2.x key as path, and the file and line that
# set the value, or, where the repository leaves the key unset (Flink's default applies), the
# place that should set it.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep
import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

# The deployment package's rules, named once here by their full path: on regorus a body that
# reaches a rule through the `dep` import costs about as much as evaluating the whole deployment
# document (measured alone: 0.18 ms, against 0.06 ms by full path); function calls such as
# dep.setting do not pay it.
_dep_reasons := sort([r | some r in data.streamwarden.deployment.checkpointing_reasons])

_dep_ckpt_settings := data.streamwarden.deployment.ckpt_settings

_dep_views := data.streamwarden.deployment.views

# SW-CKPT-001 (repository side): the deployment does not checkpoint although it must.
deny contains f if {
	some e in dep.settings("execution.checkpointing.interval")
	dep.checkpointing_off(e) # first: the reasons are messages, built only when checkpointing is off
	count(_dep_reasons) > 0
	f := dep.finding(
		"SW-CKPT-001", "execution.checkpointing.interval", e,
		sprintf(
			"checkpointing is off in the deployment: the repository %s, but %s; set execution.checkpointing.interval%s",
			[_dep_interval_says(e), concat(" and ", _dep_reasons), _dep_interval_hint],
		),
		{"interval": e.value, "reasons": _dep_reasons},
	)
}

_dep_interval_says(e) := sprintf("sets %s to %v at %s:%v", [dep.written(e), e.raw, e.file, e.line]) if {
	e.default == false
} else := "leaves execution.checkpointing.interval unset (Flink's default: no periodic checkpoints)"

_dep_interval_hint := sprintf(" to the contract's %s", [lib.fmt_ms(input.contract.checkpoint.interval)]) if {
	lib.positive(input.contract.checkpoint.interval)
} else := " (for example to 60 s)"

# METADATA
# title: Deployed checkpoint settings must match the contract
# description: |
#   Compares the checkpoint settings the contract declares (interval, mode, timeout, min_pause,
#   max_concurrent, unaligned, tolerable_failures) with the effective values of the repository's
#   deployment files (execution.checkpointing.*; a key left unset counts as Flink's default) and,
#   from live facts, the running job. One finding per differing setting, naming both values and
#   where each came from. Where the repository does not checkpoint at all (interval unset),
#   SW-CKPT-001 reports it, and this rule does not repeat it for the interval nor for settings
#   left at Flink's default; settings the repository sets explicitly are still compared. A
#   setting the contract does not declare is not compared.
# custom:
#   id: SW-CKPT-003
#   severity: error
#   remediation: |
#     Change the deployment file at the line named in the finding so it matches the contract
#     (or set the key where the finding points when it is unset), or change the contract if the
#     deployment is right.
#   example: |
#     checkpoint: {interval: 60s}                         # contract
#     execution.checkpointing.interval: 30 s              # flinkConfiguration
deny contains f if {
	some s in _dep_ckpt_settings
	want := input.contract.checkpoint[s.setting]
	some v in _dep_views
	e := v[s.key]
	want != e.value # most settings agree: stop before the function calls
	not dep.same_setting(s.setting, want, e.value)
	not dep.covered_by_ckpt001(s, e, v)
	f := dep.finding(
		"SW-CKPT-003", s.key, e,
		sprintf(
			"the %s differs from the contract: the contract says %s (checkpoint.%s) but the repository %s",
			[s.label, dep.show(want, s.type), s.setting, dep.repo_says(e, s.type)],
		),
		{"setting": s.setting, "contract": want, "contract_field": sprintf("checkpoint.%s", [s.setting])},
	)
}

# SW-CKPT-004 (repository side): checkpoints kept in JobManager memory.
deny contains f if {
	some e in dep.settings("execution.checkpointing.storage")
	e.value == "jobmanager"
	f := dep.finding(
		"SW-CKPT-004", "execution.checkpointing.storage", e,
		sprintf("checkpoint storage is not durable: the repository %s, which keeps checkpoints in JobManager memory that a failover loses; set execution.checkpointing.dir to a durable URI such as s3://, gs://, abfs:// or hdfs://", [dep.repo_says(e, "name")]),
		{"reason": "jobmanager"},
	)
}

# SW-CKPT-004 (repository side): a checkpoint directory on local disk.
deny contains f if {
	some e in dep.settings("execution.checkpointing.dir")
	is_string(e.value)
	reason := dep.nondurable(e.value)
	f := dep.finding(
		"SW-CKPT-004", "execution.checkpointing.dir", e,
		sprintf("checkpoint storage is not durable: the repository %s, %s; use a durable URI such as s3://, gs://, abfs:// or hdfs://", [dep.repo_says(e, "string"), reason]),
		{"reason": reason},
	)
}

# SW-CKPT-004 (repository side): checkpointing on, but no checkpoint directory.
deny contains f if {
	some v in _dep_views
	e := v["execution.checkpointing.dir"]
	e.value == null
	dep.view_checkpointing_on(v)
	count(_dep_reasons) > 0
	v["execution.checkpointing.storage"].value != "jobmanager"
	f := dep.finding(
		"SW-CKPT-004", "execution.checkpointing.dir", e,
		"checkpointing is on in the deployment but execution.checkpointing.dir is not set: Flink then keeps checkpoints in JobManager memory; set it to a durable URI such as s3://, gs://, abfs:// or hdfs://",
		{"reason": "missing"},
	)
}

# Why the contract needs checkpoints retained on cancel (SW-CKPT-005).
_dep_retain_reasons contains sprintf("retention.rollback_window is %s", [lib.fmt_ms(w)]) if {
	w := input.contract.retention.rollback_window
	lib.positive(w)
}

_dep_retain_reasons contains "the contract declares checkpoint.externalized retain_on_cancellation" if {
	input.contract.checkpoint.externalized == "retain_on_cancellation"
}

# SW-CKPT-005 (repository side)
deny contains f if {
	some e in dep.settings("execution.checkpointing.externalized-checkpoint-retention")
	e.value != "retain_on_cancellation"
	count(_dep_retain_reasons) > 0
	reasons := sort([r | some r in _dep_retain_reasons])
	f := dep.finding(
		"SW-CKPT-005", "execution.checkpointing.externalized-checkpoint-retention", e,
		sprintf("checkpoints are not retained on cancel: the repository %s, but %s, so a cancelled job must stay restorable; set it to RETAIN_ON_CANCELLATION", [dep.repo_says(e, "enum"), concat(" and ", reasons)]),
		{"reasons": reasons},
	)
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

# SW-CKPT-006 (repository side)
warn contains f if {
	count(_dep_retained_needed) > 0
	needed := max(_dep_retained_needed)
	some e in dep.settings("execution.checkpointing.num-retained")
	e.value < needed
	f := dep.finding(
		"SW-CKPT-006", "execution.checkpointing.num-retained", e,
		sprintf("too few retained checkpoints: the repository %s, but the contract needs at least %v (checkpoint.num_retained, retention.checkpoints.num_retained, or 2 with a rollback window); set it to %v", [dep.repo_says(e, "int"), needed, needed]),
		{"required": needed},
	)
}

# SW-CKPT-007 (repository side)
deny contains f if {
	some e in dep.settings("execution.checkpointing.mode")
	e.value == "at_least_once"
	count(exactly_once_sinks) > 0
	f := dep.finding(
		"SW-CKPT-007", "execution.checkpointing.mode", e,
		sprintf("the repository %s, but sinks promise exactly-once delivery (%s): a restore can commit records twice; set it to EXACTLY_ONCE", [dep.repo_says(e, "enum"), concat(", ", exactly_once_sinks)]),
		{"exactly_once_sinks": exactly_once_sinks},
	)
}

# SW-CKPT-008 (repository side): unlimited, or above the contract's tolerable_failures.
warn contains f if {
	some e in dep.settings("execution.checkpointing.tolerable-failed-checkpoints")
	why := _dep_tolerable_excess(e.value)
	f := dep.finding(
		"SW-CKPT-008", "execution.checkpointing.tolerable-failed-checkpoints", e,
		sprintf("checkpoint failures can go unnoticed: the repository %s, %s", [dep.repo_says(e, "int"), why]),
		{"contract": object.get(input.contract, ["checkpoint", "tolerable_failures"], null)},
	)
}

_dep_tolerable_excess(v) := "which is unlimited: failed checkpoints never fail the job; set a small limit such as the contract's tolerable_failures" if {
	lib.unlimited_failures(v)
} else := sprintf("above the contract's checkpoint.tolerable_failures %v; lower it to %v", [c, c]) if {
	c := input.contract.checkpoint.tolerable_failures
	is_number(c)
	not lib.unlimited_failures(c)
	v > c
}
