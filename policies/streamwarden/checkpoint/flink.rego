# Checkpoint contract (SW-CKPT): helpers of the live side, read from the Flink REST facts
# (input.facts.flink, documented in docs/facts-flink.md). Durations are milliseconds on both
# sides. Live findings carry "source": "flink" and point at the contract field they compare; their
# messages name both values and where each came from. Time comes from the cluster clock seen
# when the facts were read (facts.flink.job.now), else input.now_ms.
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# The facts of the pipeline's job, when it was found and its details were read.
_flink := lib.flink_job(input.facts.flink)

# "running job orders (jid 4d986ca0…)", with the job's state.
_flink_ref := lib.flink_job_ref(_flink)

_flink_running if _flink.job.state == "running"

_flink_now := n if {
	n := _flink.job.now
	is_number(n)
} else := input.now_ms

_flink_cfg := c if {
	c := _flink.checkpoint_config
	c.available == true
}

_flink_ckpts := c if {
	c := _flink.checkpoints
	c.available == true
}

_flink_stats_source := sprintf("/jobs/%s/checkpoints", [_flink.job_id])

# The checkpoint timeout that bounds checkpoints: the contract's, else the running job's, else
# Flink's default of 10 minutes.
_flink_timeout := t if {
	t := _ckpt.timeout
	is_number(t)
} else := t if {
	t := _flink_cfg.timeout
	is_number(t)
} else := 600000

_flink_timeout_origin := "checkpoint.timeout" if {
	is_number(_ckpt.timeout)
} else := "the running job's timeout" if {
	is_number(_flink_cfg.timeout)
} else := "Flink's default timeout"

# Settings SW-CKPT-003 compares, with how to print them.
_flink_compared := {
	"interval": "duration",
	"mode": "text",
	"timeout": "duration",
	"min_pause": "duration",
	"max_concurrent": "text",
	"unaligned": "text",
	"tolerable_failures": "text",
}

_flink_fmt(kind, v) := lib.fmt_ms(v) if {
	kind == "duration"
} else := sprintf("%v", [v])

_flink_failed := [h | some h in _flink_ckpts.history; h.status == "failed"]

_flink_last_failure := sprintf("; the latest failure: %s", [_flink_failed[0].failure_message]) if {
	is_string(_flink_failed[0].failure_message)
} else := ""

# Recent completed checkpoints with a duration: the history plus the latest completed one.
_flink_completed[e.id] := e if {
	some e in _flink_ckpts.history
	e.status == "completed"
	is_number(e.end_to_end_duration)
}

_flink_completed[e.id] := e if {
	e := _flink_ckpts.latest.completed
	is_number(e.end_to_end_duration)
	not _flink_in_history(e.id)
}

_flink_in_history(id) if {
	some h in _flink_ckpts.history
	h.id == id
}

_flink_slowest := e if {
	top := max({d | some x in _flink_completed; d := x.end_to_end_duration})
	id := max({i | some i, x in _flink_completed; x.end_to_end_duration == top})
	e := _flink_completed[id]
}

# The bounds a checkpoint's duration is held to (SW-CKPT-012): the contract's max_duration
# (when declared) and half the checkpoint timeout.
_flink_bounds contains {"limit": d, "path": "checkpoint.health.max_duration", "text": t} if {
	d := _ckpt.health.max_duration
	is_number(d)
	t := sprintf("contract checkpoint.health.max_duration %s", [lib.fmt_ms(d)])
}

_flink_bounds contains {"limit": _flink_timeout / 2, "path": "checkpoint.timeout", "text": t} if {
	t := sprintf("half of %s %s", [_flink_timeout_origin, lib.fmt_ms(_flink_timeout)])
}

# The job's latest failure, for messages.
_flink_last_exception := sprintf("; latest failure: %s", [e.message]) if {
	e := _flink.exceptions.entries[0]
	is_string(e.message)
} else := ""

# Restarts the contract tolerates: none with restart_strategy none, else checkpoint.health.max_restarts.
_flink_restarts_allowed := 0 if {
	input.contract.job.restart_strategy == "none"
} else := n if {
	n := _ckpt.health.max_restarts
	is_number(n)
}

_flink_restarts_rule := ["job.restart_strategy", "contract job.restart_strategy is none, which tolerates no restart"] if {
	input.contract.job.restart_strategy == "none"
} else := ["checkpoint.health.max_restarts", sprintf("contract checkpoint.health.max_restarts tolerates %v", [_flink_restarts_allowed])]

_flink_similar_text(similar) := sprintf("; jobs with similar names: %s", [concat(", ", similar)]) if {
	count(similar) > 0
} else := ""

# SW-FACT-001 (live side): the job was found but a section the checkpoint rules read could not be
# gathered. The whole source being unavailable is reported by streamwarden.facts.
_flink_needed_sections := ["checkpoint_config", "checkpoints"]
