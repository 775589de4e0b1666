# Checkpoint contract (SW-CKPT): the contract side of each rule.
# Repository and live (Flink REST) sides of the same ids live in the other checkpoint_*.rego files
# of this package; their METADATA stays here, above the first body of each id. Helpers that those
# files share (exactly_once_sinks, nondurable_storage, ...) keep their names.
# Durations in input.contract are milliseconds; absent optional fields stay absent.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

_ckpt := object.get(input.contract, "checkpoint", {})

# The checkpoint section is declared (rules that compare a field against Flink's default
# only apply when the contract has a checkpoint section at all).
_has_ckpt if is_object(input.contract.checkpoint)

# Checkpointing is on in the contract: a positive interval.
_interval_set if lib.positive(_ckpt.interval)

_state_operators := object.get(input.contract, ["state", "operators"], [])

# The sinks that promise exactly-once delivery: their names, "job.sinks[i]" for an unnamed one.
exactly_once_sinks := lib.exactly_once_sink_labels(input.contract)

# Why the pipeline needs checkpoints (SW-CKPT-001), state first.
_needs_checkpointing := array.concat(_stateful_reason, _exactly_once_reason)

_stateful_reason := [sprintf("it keeps state (%d operators under state.operators)", [count(_state_operators)])] if {
	count(_state_operators) > 0
} else := []

_exactly_once_reason := [sprintf("it has exactly-once sinks (%s)", [concat(", ", exactly_once_sinks)])] if {
	count(exactly_once_sinks) > 0
} else := []

_durable_hint := "use a durable URI such as s3://, gs://, abfs:// or hdfs://"

# METADATA
# title: Stateful or exactly-once pipelines must checkpoint
# description: |
#   Fires when the pipeline keeps state (state.operators is not empty) or has a sink with
#   delivery exactly_once, and checkpointing is disabled: checkpoint.interval is absent (or the
#   whole checkpoint section is), or not positive. Without checkpoints, a restart loses all state
#   and the Iceberg sink never commits (it commits on checkpoint), so exactly-once is impossible.
#   The repository and live sides report a deployment whose effective interval is unset.
# custom:
#   id: SW-CKPT-001
#   severity: error
#   remediation: |
#     Declare checkpoint.interval (for example 60s) in the contract and set
#     execution.checkpointing.interval to the same value in the deployment.
#   example: |
#     state: {operators: [{uid: dedup, kind: keyed, ttl: 24h}]}
#     checkpoint: {mode: exactly_once}   # no interval: checkpointing is off
deny contains f if {
	not _interval_set # first: the reasons are messages, built only for a contract without an interval
	count(_needs_checkpointing) > 0
	f := {
		"rule": "SW-CKPT-001",
		"message": sprintf(
			"checkpointing is disabled (checkpoint.interval is %s) but %s; declare a positive checkpoint.interval such as 60s",
			[_interval_text, concat(" and ", _needs_checkpointing)],
		),
		"path": "checkpoint.interval",
		"evidence": {
			"interval": object.get(_ckpt, "interval", null),
			"state_operators": count(_state_operators),
			"exactly_once_sinks": exactly_once_sinks,
		},
	}
}

_interval_text := lib.fmt_ms(_ckpt.interval) if {
	is_number(_ckpt.interval)
} else := "not set"

# METADATA
# title: Checkpoint settings must not contradict each other
# description: |
#   The checkpoint section contradicts itself. Each contradiction is its own finding:
#   min_pause >= interval (checkpoints can never start on schedule; equal fires);
#   timeout <= health.max_duration (checkpoints that the health contract calls healthy are
#   aborted); unaligned true with mode at_least_once (Flink supports unaligned checkpoints only
#   in exactly-once mode); unaligned true with max_concurrent > 1 (unaligned checkpoints run one
#   at a time); health.max_age < interval (the latest checkpoint is older than max_age between
#   two healthy checkpoints; equal does not fire).
# custom:
#   id: SW-CKPT-002
#   severity: error
#   remediation: |
#     Make min_pause shorter than interval, timeout longer than health.max_duration,
#     health.max_age at least interval; use unaligned checkpoints only with mode exactly_once
#     and max_concurrent 1.
#   example: |
#     checkpoint: {interval: 30s, min_pause: 60s}
deny contains f if {
	interval := _ckpt.interval
	pause := _ckpt.min_pause
	pause >= interval
	f := {
		"rule": "SW-CKPT-002",
		"message": sprintf(
			"checkpoint.min_pause (%s) is not shorter than checkpoint.interval (%s): checkpoints cannot start on schedule; make min_pause shorter than interval",
			[lib.fmt_ms(pause), lib.fmt_ms(interval)],
		),
		"path": "checkpoint.min_pause",
		"evidence": {"min_pause": pause, "interval": interval},
	}
}

# SW-CKPT-002: timeout <= health.max_duration
deny contains f if {
	timeout := _ckpt.timeout
	max_duration := _ckpt.health.max_duration
	timeout <= max_duration
	f := {
		"rule": "SW-CKPT-002",
		"message": sprintf(
			"checkpoint.timeout (%s) is not longer than checkpoint.health.max_duration (%s): checkpoints the contract calls healthy would be aborted; raise timeout above max_duration",
			[lib.fmt_ms(timeout), lib.fmt_ms(max_duration)],
		),
		"path": "checkpoint.timeout",
		"evidence": {"timeout": timeout, "max_duration": max_duration},
	}
}

# SW-CKPT-002: unaligned with at_least_once
deny contains f if {
	_ckpt.unaligned == true
	_ckpt.mode == "at_least_once"
	f := {
		"rule": "SW-CKPT-002",
		"message": "checkpoint.unaligned is true with checkpoint.mode at_least_once: Flink supports unaligned checkpoints only in exactly_once mode; set unaligned to false or mode to exactly_once",
		"path": "checkpoint.unaligned",
		"evidence": {"unaligned": true, "mode": "at_least_once"},
	}
}

# SW-CKPT-002: unaligned with max_concurrent > 1
deny contains f if {
	_ckpt.unaligned == true
	max_concurrent := _ckpt.max_concurrent
	max_concurrent > 1
	f := {
		"rule": "SW-CKPT-002",
		"message": sprintf(
			"checkpoint.max_concurrent is %v with unaligned checkpoints: unaligned checkpoints run one at a time; set max_concurrent to 1 or unaligned to false",
			[max_concurrent],
		),
		"path": "checkpoint.max_concurrent",
		"evidence": {"unaligned": true, "max_concurrent": max_concurrent},
	}
}

# SW-CKPT-002: health.max_age < interval
deny contains f if {
	interval := _ckpt.interval
	max_age := _ckpt.health.max_age
	max_age < interval
	f := {
		"rule": "SW-CKPT-002",
		"message": sprintf(
			"checkpoint.health.max_age (%s) is shorter than checkpoint.interval (%s): the latest checkpoint is always older than max_age before the next one; make max_age at least interval",
			[lib.fmt_ms(max_age), lib.fmt_ms(interval)],
		),
		"path": "checkpoint.health.max_age",
		"evidence": {"max_age": max_age, "interval": interval},
	}
}

# Why a storage location is not durable, or undefined when it is (SW-CKPT-004).
# Exposed for the repository and live sides (execution.checkpointing.dir / checkpoint_storage).
nondurable_storage(s) := "local_file" if {
	startswith(lower(trim_space(s)), "file:")
} else := "jobmanager" if {
	lower(trim_space(s)) == "jobmanager"
} else := "local_path" if {
	# no URI scheme (a single letter is a Windows drive, not a scheme): a path on local disk
	not regex.match(`^[A-Za-z][A-Za-z0-9+.-]+:`, trim_space(s))
}

_storage_messages := {
	"local_file": "is on the local filesystem (file:), which dies with the machine",
	"jobmanager": "keeps checkpoints in JobManager memory, which a failover loses",
	"local_path": "has no URI scheme: it is a path on local disk, which dies with the machine",
}

# METADATA
# title: Checkpoint storage must be durable
# description: |
#   Checkpoints must survive the loss of any machine. Fires on checkpoint.storage that is a
#   file:// or file:/ URI, "jobmanager" (JobManager heap), or a path without a URI scheme
#   (/var/flink/ckpt, ckpt-dir: local disk); and on a missing storage while checkpointing is
#   configured (a positive interval), since Flink then keeps checkpoints in JobManager memory.
#   The repository and live sides check the effective execution.checkpointing.dir and storage.
# custom:
#   id: SW-CKPT-004
#   severity: error
#   remediation: |
#     Point checkpoint.storage (and execution.checkpointing.dir) at a durable, shared file
#     system such as s3://bucket/path, gs://, abfs:// or hdfs://.
#   example: |
#     checkpoint: {interval: 60s, storage: "file:///var/flink/ckpt"}
deny contains f if {
	storage := _ckpt.storage
	is_string(storage)
	not lib.blank(storage)
	reason := nondurable_storage(storage)
	f := {
		"rule": "SW-CKPT-004",
		"message": sprintf("checkpoint.storage %q %s; %s", [storage, _storage_messages[reason], _durable_hint]),
		"path": "checkpoint.storage",
		"evidence": {"storage": storage, "reason": reason},
	}
}

# SW-CKPT-004: storage missing while checkpointing is configured
deny contains f if {
	_interval_set
	lib.blank(object.get(_ckpt, "storage", null))
	f := {
		"rule": "SW-CKPT-004",
		"message": sprintf(
			"checkpointing is on (interval %s) but checkpoint.storage is not set: Flink then keeps checkpoints in JobManager memory; %s",
			[lib.fmt_ms(_ckpt.interval), _durable_hint],
		),
		"path": "checkpoint.storage",
		"evidence": {"storage": object.get(_ckpt, "storage", null), "reason": "missing", "interval": _ckpt.interval},
	}
}

_rollback_window := w if {
	w := input.contract.retention.rollback_window
	lib.positive(w)
}

# METADATA
# title: Checkpoints must be retained on cancel when rollbacks are promised
# description: |
#   When retention.rollback_window is positive, the job must be restorable after a cancel, so
#   its checkpoints must be retained: fires when checkpoint.externalized is anything but
#   retain_on_cancellation. An absent externalized in a declared checkpoint section counts as
#   Flink's default (no externalized checkpoints: deleted on cancel) and fires too; a contract
#   without a checkpoint section stays silent here.
# custom:
#   id: SW-CKPT-005
#   severity: error
#   remediation: |
#     Set checkpoint.externalized to retain_on_cancellation and
#     execution.checkpointing.externalized-checkpoint-retention to RETAIN_ON_CANCELLATION.
#   example: |
#     checkpoint: {interval: 60s, externalized: delete_on_cancellation}
#     retention: {rollback_window: 3d}
deny contains f if {
	window := _rollback_window
	_has_ckpt
	externalized := object.get(_ckpt, "externalized", null)
	externalized != "retain_on_cancellation"
	f := {
		"rule": "SW-CKPT-005",
		"message": sprintf(
			"checkpoint.externalized is %s but retention.rollback_window is %s: a cancelled job could not be restored; set externalized to retain_on_cancellation",
			[_externalized_text(externalized), lib.fmt_ms(window)],
		),
		"path": "checkpoint.externalized",
		"evidence": {"externalized": externalized, "rollback_window": window},
	}
}

_externalized_text(x) := "not set (Flink default: no externalized checkpoints, deleted on cancel)" if {
	x == null
} else := sprintf("%v", [x])

# Retained-checkpoint counts the contract asks for (SW-CKPT-006).
_retained_needed contains n if {
	n := input.contract.retention.checkpoints.num_retained
	is_number(n)
}

_retained_needed contains 2 if _rollback_window

_num_retained := object.get(_ckpt, "num_retained", 1)

# METADATA
# title: Enough checkpoints must be retained
# description: |
#   Fires when checkpoint.num_retained is below retention.checkpoints.num_retained, or below 2
#   when a positive retention.rollback_window is declared (one retained checkpoint leaves
#   nothing to roll back to if it is corrupt). One finding names the larger requirement. An
#   absent num_retained in a declared checkpoint section counts as Flink's default of 1.
# custom:
#   id: SW-CKPT-006
#   severity: warning
#   remediation: |
#     Raise checkpoint.num_retained (and execution.checkpointing.num-retained) to at least
#     retention.checkpoints.num_retained, and to at least 2 when a rollback window is declared.
#   example: |
#     checkpoint: {interval: 60s, num_retained: 1}
#     retention: {checkpoints: {num_retained: 3}}
warn contains f if {
	_has_ckpt
	count(_retained_needed) > 0
	needed := max(_retained_needed)
	_num_retained < needed
	f := {
		"rule": "SW-CKPT-006",
		"message": sprintf(
			"checkpoint.num_retained is %s but the retention contract needs at least %v retained checkpoints; raise num_retained to %v",
			[_num_retained_text, needed, needed],
		),
		"path": "checkpoint.num_retained",
		"evidence": {
			"num_retained": object.get(_ckpt, "num_retained", null),
			"effective_num_retained": _num_retained,
			"required": needed,
			"retention_num_retained": object.get(input.contract, ["retention", "checkpoints", "num_retained"], null),
			"rollback_window": object.get(input.contract, ["retention", "rollback_window"], null),
		},
	}
}

_num_retained_text := sprintf("%v", [_ckpt.num_retained]) if {
	is_number(_ckpt.num_retained)
} else := "not set (Flink default: 1)"

# METADATA
# title: Exactly-once sinks need exactly-once checkpoints
# description: |
#   Fires when a sink declares delivery exactly_once while checkpoint.mode is at_least_once:
#   with at-least-once checkpoints, records after a restore can be replayed into the sink and
#   committed twice. One finding on checkpoint.mode names every exactly-once sink. An absent
#   mode is Flink's default (exactly_once) and does not fire.
# custom:
#   id: SW-CKPT-007
#   severity: error
#   remediation: |
#     Set checkpoint.mode (and execution.checkpointing.mode) to exactly_once, or declare the
#     sinks at_least_once if duplicates are acceptable.
#   example: |
#     job: {sinks: [{name: orders-table, delivery: exactly_once}]}
#     checkpoint: {mode: at_least_once}
deny contains f if {
	_ckpt.mode == "at_least_once"
	count(exactly_once_sinks) > 0
	f := {
		"rule": "SW-CKPT-007",
		"message": sprintf(
			"checkpoint.mode is at_least_once but sinks promise exactly_once delivery (%s): a restore can commit records twice; set checkpoint.mode to exactly_once",
			[concat(", ", exactly_once_sinks)],
		),
		"path": "checkpoint.mode",
		"evidence": {"mode": "at_least_once", "exactly_once_sinks": exactly_once_sinks},
	}
}

# METADATA
# title: Checkpoint failures must not become silent
# description: |
#   Fires when checkpoint.tolerable_failures is unlimited (negative, such as -1, or
#   2147483647), or, where checkpoint.health.max_failed is declared, above it (equal is fine):
#   the job would keep running through more consecutive checkpoint failures than the health
#   contract tolerates, so failures only show up when someone looks. The repository and live
#   sides compare the deployed value with the contract's tolerable_failures.
# custom:
#   id: SW-CKPT-008
#   severity: warning
#   remediation: |
#     Set checkpoint.tolerable_failures to a small number no larger than
#     checkpoint.health.max_failed, and execution.checkpointing.tolerable-failed-checkpoints
#     to the same value.
#   example: |
#     checkpoint: {interval: 60s, tolerable_failures: -1}
warn contains f if {
	tolerable := _ckpt.tolerable_failures
	is_number(tolerable)
	lib.unlimited_failures(tolerable)
	f := {
		"rule": "SW-CKPT-008",
		"message": sprintf(
			"checkpoint.tolerable_failures is %v (unlimited): checkpoint failures never fail the job and go unnoticed; set a small limit such as 3",
			[tolerable],
		),
		"path": "checkpoint.tolerable_failures",
		"evidence": {"tolerable_failures": tolerable, "unlimited": true},
	}
}

# SW-CKPT-008: above health.max_failed
warn contains f if {
	tolerable := _ckpt.tolerable_failures
	is_number(tolerable)
	not lib.unlimited_failures(tolerable)
	max_failed := _ckpt.health.max_failed
	is_number(max_failed)
	tolerable > max_failed
	f := {
		"rule": "SW-CKPT-008",
		"message": sprintf(
			"checkpoint.tolerable_failures (%v) is above checkpoint.health.max_failed (%v): the job keeps running through more failed checkpoints than the contract tolerates; lower tolerable_failures to %v or less",
			[tolerable, max_failed, max_failed],
		),
		"path": "checkpoint.tolerable_failures",
		"evidence": {"tolerable_failures": tolerable, "max_failed": max_failed},
	}
}
