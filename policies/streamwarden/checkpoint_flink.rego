# Checkpoint contract (SW-CKPT): the live side, read from the Flink REST facts
# (input.facts.flink, documented in docs/facts-flink.md). Durations are milliseconds on both
# sides. Findings carry "source": "flink" and point at the contract field they compare; their
# messages name both values and where each came from. Time comes from the cluster clock seen
# when the facts were read (facts.flink.job.now), else input.now_ms.
# SW-CKPT-003's METADATA lives with its repository side (checkpoint_deployment.rego).
package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

# The facts of the pipeline's job, when it was found and its details were read.
_flink := fl if {
	fl := input.facts.flink
	fl.available == true
	fl.job_found == true
	fl.job.available == true
}

# "running job orders (jid 4d986ca0…)", with the job's state.
_flink_ref := sprintf("%s job %s (jid %s…)", [_flink.job.state, _flink.job_name, substring(_flink.job_id, 0, 8)])

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

# SW-CKPT-003 (running side): a checkpoint setting of the running job differs from the contract.
# Where the running job does not checkpoint at all, SW-CKPT-001 reports it and this stays quiet.
deny contains f if {
	cfg := _flink_cfg
	cfg.enabled == true
	some field, kind in _flink_compared
	want := _ckpt[field]
	have := cfg[field]
	have != null
	want != have
	f := {
		"rule": "SW-CKPT-003",
		"message": sprintf(
			"contract checkpoint.%s %s vs %s %s from %s: the job does not run with the checkpoint settings the contract promises; redeploy it with checkpoint.%s %s or change the contract",
			[field, _flink_fmt(kind, want), _flink_ref, _flink_fmt(kind, have), cfg.source, field, _flink_fmt(kind, want)],
		),
		"path": sprintf("checkpoint.%s", [field]),
		"source": "flink",
		"value": sprintf("flink:%v", [have]),
		"evidence": {
			"setting": field,
			"contract": want,
			"running": have,
			"job_id": _flink.job_id,
			"source": cfg.source,
		},
	}
}

# METADATA
# title: The running job must checkpoint on time
# description: |
#   Live Flink facts: fires when the job is RUNNING and its latest completed checkpoint
#   completed longer ago than checkpoint.health.max_age, or when no checkpoint has completed
#   although the job has run longer than health.max_age plus the checkpoint timeout (the
#   contract's checkpoint.timeout, else the running job's). Age is measured on the cluster's
#   clock when the facts were read. A job that is not running is SW-CKPT-013's.
# custom:
#   id: SW-CKPT-010
#   severity: error
#   remediation: |
#     Find why checkpoints stall (backpressure, a slow sink, failing checkpoints: see the
#     exception history and checkpoint history in the Flink UI) and fix it; until a checkpoint
#     completes, a failure replays everything since the last one.
#   example: |
#     checkpoint: {interval: 60s, health: {max_age: 5m}}
#     # running job: latest completed checkpoint 40 minutes ago
deny contains f if {
	_flink_running
	max_age := _ckpt.health.max_age
	latest := _flink_ckpts.latest.completed
	is_number(latest.latest_ack_timestamp)
	age := _flink_now - latest.latest_ack_timestamp
	age > max_age
	f := {
		"rule": "SW-CKPT-010",
		"message": sprintf(
			"%s: the latest completed checkpoint (#%v, from %s) completed %s ago, older than contract checkpoint.health.max_age %s; checkpoints are stalling",
			[_flink_ref, latest.id, _flink_stats_source, lib.fmt_age(age), lib.fmt_ms(max_age)],
		),
		"path": "checkpoint.health.max_age",
		"source": "flink",
		"value": "flink:stale-checkpoint",
		"evidence": {
			"job_id": _flink.job_id,
			"checkpoint_id": latest.id,
			"completed_at": latest.latest_ack_timestamp,
			"age": age,
			"max_age": max_age,
			"failed": object.get(_flink_ckpts, ["counts", "failed"], null),
		},
	}
}

# SW-CKPT-010: no checkpoint completed although the job has run long enough
deny contains f if {
	_flink_running
	max_age := _ckpt.health.max_age
	not is_object(_flink_ckpts.latest.completed)
	started := _flink.job.start_time
	is_number(started)
	ran := _flink_now - started
	ran > max_age + _flink_timeout
	f := {
		"rule": "SW-CKPT-010",
		"message": sprintf(
			"%s has run for %s without completing a checkpoint (%v failed, from %s); contract checkpoint.health.max_age %s plus %s %s have passed",
			[
				_flink_ref, lib.fmt_ms(ran), object.get(_flink_ckpts, ["counts", "failed"], 0),
				_flink_stats_source, lib.fmt_ms(max_age), _flink_timeout_origin, lib.fmt_ms(_flink_timeout),
			],
		),
		"path": "checkpoint.health.max_age",
		"source": "flink",
		"value": "flink:no-checkpoint",
		"evidence": {
			"job_id": _flink.job_id,
			"running_for": ran,
			"max_age": max_age,
			"timeout": _flink_timeout,
			"failed": object.get(_flink_ckpts, ["counts", "failed"], null),
		},
	}
}

_flink_failed := [h | some h in _flink_ckpts.history; h.status == "failed"]

_flink_last_failure := sprintf("; the latest failure: %s", [_flink_failed[0].failure_message]) if {
	is_string(_flink_failed[0].failure_message)
} else := ""

# METADATA
# title: Checkpoints of the running job must not keep failing
# description: |
#   Live Flink facts: fires when the recent checkpoint history (the last entries Flink keeps,
#   10 by default) holds more failed checkpoints than checkpoint.health.max_failed (equal is
#   fine). Checkpoints that failed to trigger count in Flink's total but not in the history;
#   the total is in the evidence.
# custom:
#   id: SW-CKPT-011
#   severity: error
#   remediation: |
#     Read the failure messages in the checkpoint history (timeouts, storage errors, declined
#     checkpoints) and fix the cause; raise the timeout only if checkpoints are slow but healthy.
#   example: |
#     checkpoint: {interval: 60s, health: {max_failed: 3}}
#     # running job: 5 of the last 10 checkpoints failed
deny contains f if {
	max_failed := _ckpt.health.max_failed
	count(_flink_failed) > max_failed
	f := {
		"rule": "SW-CKPT-011",
		"message": sprintf(
			"%s: %d of the last %d checkpoints failed (from %s), more than contract checkpoint.health.max_failed %v%s",
			[_flink_ref, count(_flink_failed), count(_flink_ckpts.history), _flink_stats_source, max_failed, _flink_last_failure],
		),
		"path": "checkpoint.health.max_failed",
		"source": "flink",
		"value": "flink:failed-checkpoints",
		"evidence": {
			"job_id": _flink.job_id,
			"failed_in_history": count(_flink_failed),
			"history": count(_flink_ckpts.history),
			"failed_total": object.get(_flink_ckpts, ["counts", "failed"], null),
			"max_failed": max_failed,
			"failed_ids": [h.id | some h in _flink_failed],
		},
	}
}

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

# METADATA
# title: Checkpoints of the running job must be fast enough
# description: |
#   Live Flink facts: fires when a recent completed checkpoint (the history Flink keeps, and
#   the latest completed one) took longer end to end than checkpoint.health.max_duration, or
#   longer than half of the checkpoint timeout (the contract's, else the running job's): at that
#   pace a slightly slower checkpoint is aborted. One finding names the slowest checkpoint and
#   the tightest bound it broke.
# custom:
#   id: SW-CKPT-012
#   severity: warning
#   remediation: |
#     Look for backpressure and large state: enable unaligned or incremental checkpoints, give
#     the sink more parallelism, or raise the timeout and health.max_duration if the pace is
#     expected.
#   example: |
#     checkpoint: {interval: 60s, timeout: 10m, health: {max_duration: 60s}}
#     # running job: the last checkpoint took 4 minutes
warn contains f if {
	e := _flink_slowest
	broken := [b | some b in _flink_bounds; e.end_to_end_duration > b.limit]
	count(broken) > 0
	tightest := min({b.limit | some b in broken})
	path := min({b.path | some b in broken; b.limit == tightest})
	some b in broken
	b.path == path
	f := {
		"rule": "SW-CKPT-012",
		"message": sprintf(
			"%s: checkpoint #%v took %s end to end (from %s), longer than %s",
			[_flink_ref, e.id, lib.fmt_ms(e.end_to_end_duration), _flink_stats_source, b.text],
		),
		"path": b.path,
		"source": "flink",
		"value": "flink:slow-checkpoint",
		"evidence": {
			"job_id": _flink.job_id,
			"checkpoint_id": e.id,
			"duration": e.end_to_end_duration,
			"limit": b.limit,
			"slow": count([x | some x in _flink_completed; x.end_to_end_duration > b.limit]),
		},
	}
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

# METADATA
# title: The job must be running and stable
# description: |
#   Live Flink facts: fires when the pipeline's job is not RUNNING (created, restarting,
#   failing, failed, canceled, finished...), when no job with the contract's job.name exists on
#   the cluster, or when the running job has restarted more often than the contract tolerates
#   (checkpoint.health.max_restarts; job.restart_strategy none tolerates no restart). Restarts
#   since the job started come from the numRestarts job metric, else from the exception history.
# custom:
#   id: SW-CKPT-013
#   severity: warning
#   remediation: |
#     Check the job's exception history for why it stopped or restarts, fix the cause and
#     restore it from its latest retained checkpoint or savepoint.
#   example: |
#     job: {name: orders-enrichment, restart_strategy: none}
#     # cluster: job orders-enrichment is CANCELED
warn contains f if {
	state := _flink.job.state
	state != "running"
	f := {
		"rule": "SW-CKPT-013",
		"message": sprintf(
			"job %s (jid %s…) is %s, not running (from /jobs/%s)%s",
			[_flink.job_name, substring(_flink.job_id, 0, 8), upper(state), _flink.job_id, _flink_last_exception],
		),
		"path": "job.name",
		"source": "flink",
		"value": sprintf("flink:%s", [state]),
		"evidence": {"job_id": _flink.job_id, "state": state, "end_time": object.get(_flink.job, "end_time", null)},
	}
}

# SW-CKPT-013: no job with this name on the cluster
warn contains f if {
	fl := input.facts.flink
	fl.available == true
	fl.job_found == false
	similar := object.get(fl, "similar_jobs", [])
	f := {
		"rule": "SW-CKPT-013",
		"message": sprintf(
			"no job named %q on %s (from /jobs/overview), so it is not running%s",
			[fl.job_name, fl.rest_url, _flink_similar_text(similar)],
		),
		"path": "job.name",
		"source": "flink",
		"value": "flink:not-found",
		"evidence": {"job_name": fl.job_name, "rest_url": fl.rest_url, "similar_jobs": similar},
	}
}

_flink_similar_text(similar) := sprintf("; jobs with similar names: %s", [concat(", ", similar)]) if {
	count(similar) > 0
} else := ""

# SW-CKPT-013: restarted more often than the contract tolerates
warn contains f if {
	_flink_running
	allowed := _flink_restarts_allowed
	restarts := _flink.restarts
	is_number(restarts)
	restarts > allowed
	f := {
		"rule": "SW-CKPT-013",
		"message": sprintf(
			"%s restarted %v times (from %s) but %s%s",
			[_flink_ref, restarts, _flink.restarts_source, _flink_restarts_rule[1], _flink_last_exception],
		),
		"path": _flink_restarts_rule[0],
		"source": "flink",
		"value": "flink:restarts",
		"evidence": {"job_id": _flink.job_id, "restarts": restarts, "allowed": allowed, "from": _flink.restarts_source},
	}
}

# SW-FACT-001 (live side): the job was found but a section the checkpoint rules read could not be
# gathered. The whole source being unavailable is reported by streamwarden.facts.
_flink_needed_sections := ["checkpoint_config", "checkpoints"]

warn contains f if {
	some section in _flink_needed_sections
	s := _flink[section]
	s.available == false
	f := object.union(
		{
			"rule": "SW-FACT-001",
			"message": sprintf(
				"flink facts %s of job %s (jid %s…) could not be gathered: %s; rules that need them were not evaluated",
				[section, _flink.job_name, substring(_flink.job_id, 0, 8), object.get(s, "error", "no error was reported")],
			),
			"path": sprintf("facts.flink.%s", [section]),
			"value": sprintf("flink.%s", [section]),
			"source": "flink",
			"evidence": {"source": "flink", "section": section, "error": object.get(s, "error", null)},
		},
		_flink_gate_severity,
	)
}

_flink_gate_severity := {"severity": "error"} if {
	input.mode == "gate"
} else := {}
