# Checkpoint contract (SW-CKPT): helpers of the contract side, shared by the rule files of this
# package (one per rule id, sw_ckpt_NNN.rego, each holding every body of its id and its METADATA).
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
_needs_checkpointing := lib.checkpointing_reasons(_state_operators, exactly_once_sinks)

_durable_hint := "use a durable URI such as s3://, gs://, abfs:// or hdfs://"

_interval_text := lib.fmt_ms(_ckpt.interval) if {
	is_number(_ckpt.interval)
} else := "not set"

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

_rollback_window := w if {
	w := input.contract.retention.rollback_window
	lib.positive(w)
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

_num_retained_text := sprintf("%v", [_ckpt.num_retained]) if {
	is_number(_ckpt.num_retained)
} else := "not set (Flink default: 1)"
