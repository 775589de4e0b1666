package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

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
