# Repository deployment files (SW-DEPLOY) and the helpers every repository-side rule uses.
# input.facts.deployment is built by streamwarden/facts/deployment.py: the effective Flink
# configuration keyed by the 2.x key, each entry with its provenance (file, line, key as written,
# raw text) or "default": true where the repository leaves the key unset (Flink's default then).
# The repository-side bodies of SW-CKPT-* and SW-STATE-* live in their rule files
# (checkpoint/sw_ckpt_NNN_deployment.rego, state/sw_state_NNN_deployment.rego) and call the helpers
# below.
package streamwarden.deployment

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.deployment]

facts := object.get(object.get(input, "facts", {}), "deployment", {})

# The deployment files could be read (SW-FACT-001 reports when they could not).
available if facts.available == true

# The configurations the rules judge. A SQL script is read in statement order: each job it runs
# sees the SETs before it (facts.jobs), and each job this contract's job is (selected) is judged
# on its own configuration, so two jobs that see different settings are both judged. Without SQL
# jobs there is one effective configuration (facts.config).
configs := cs if {
	cs := [j.config | some j in object.get(facts, "jobs", []); j.selected == true]
	count(cs) > 0
} else := [object.get(facts, "config", {})]

# views: for each judged configuration, the entries the policies can read, gathered once per
# evaluation: a Flink 2.x key's effective entry, set or defaulted, when its value parsed (an
# unparseable value is SW-DEPLOY-003's, and no other rule guesses at it) and is not a placeholder
# filled in at deploy time (${VAR}, {{ .Values.x }}: SW-DEPLOY-004 names it, info). A rule that
# reads several keys together takes them from one view.
views := [{k: e | some k, e in c; not e.error; not e.placeholder} | available; some c in configs]

# settings(key): the entries of a key across the views (one when the jobs agree, or without jobs).
settings(key) := {e | some v in views; e := v[key]}

# Where a finding about entry e points: the line that sets it, or, for a key the repository
# leaves unset, the place that should set it (the CR's flinkConfiguration, or the first file).
location(e) := {"file": e.file, "line": e.line} if {
	e.default == false
} else := object.get(facts, "anchor", {"file": null, "line": null})

# origin(e): where the effective value came from, for messages and evidence.
origin(e) := sprintf("%s:%v (%s)", [e.file, e.line, e.key]) if {
	e.default == false
} else := "Flink default (unset in the repository)"

# show(v, type): a value as a reader writes it; durations in the contract's units (60000 -> 1m).
show(v, type) := "unset" if {
	v == null
} else := lib.fmt_ms(v) if {
	type == "duration"
} else := sprintf("%v", [v])

# written(e): the key as the file writes it, with its Flink 2.x name beside it when the file
# uses a deprecated one ("state.checkpoints.dir (execution.checkpointing.dir in Flink 2.x)") or
# an operator field ("spec.job.parallelism (Flink's parallelism.default)").
written(e) := sprintf(_written_form(e.key), [e.key, names[0]]) if {
	e.default == false
	names := sort([k | some k, c in facts.config; c == e; k != e.key])
	count(names) == 1
} else := e.key

_written_form(key) := "%s (Flink's %s)" if startswith(key, "spec.") else := "%s (%s in Flink 2.x)"

# repo_says(e, type): what the repository does with a key, for messages.
repo_says(e, type) := sprintf("sets %s to %s at %s:%v", [written(e), show(e.value, type), e.file, e.line]) if {
	e.default == false
} else := sprintf("leaves %s unset, so Flink uses its default %s", [e.key, show(e.value, type)])

# finding(rule, key, e, message, evidence): a repository-sourced finding about entry e.
finding(rule, key, e, message, evidence) := lib.finding(
	rule, key, message,
	object.union(evidence, {
		"deployment_key": e.key,
		"deployment_value": e.value,
		"deployment_source": origin(e),
	}),
	{"source": "deployment", "file": loc.file, "line": loc.line, "value": e.value},
) if {
	loc := location(e)
}

# --- what the contract asks of the deployment -------------------------------------------------

# An interval entry that means "no periodic checkpoints".
checkpointing_off(e) if e.value == null

checkpointing_off(e) if {
	is_number(e.value)
	e.value <= 0
}

# A view (one judged configuration) that does not checkpoint / that does.
view_checkpointing_off(v) if checkpointing_off(v["execution.checkpointing.interval"])

view_checkpointing_on(v) if {
	e := v["execution.checkpointing.interval"]
	not checkpointing_off(e)
}

# Settings SW-CKPT-003 compares: contract field under checkpoint -> Flink key.
ckpt_settings := [
	{"setting": "interval", "label": "checkpoint interval", "key": "execution.checkpointing.interval", "type": "duration"},
	{"setting": "mode", "label": "checkpoint mode", "key": "execution.checkpointing.mode", "type": "enum"},
	{"setting": "timeout", "label": "checkpoint timeout", "key": "execution.checkpointing.timeout", "type": "duration"},
	{"setting": "min_pause", "label": "minimum pause between checkpoints", "key": "execution.checkpointing.min-pause", "type": "duration"},
	{"setting": "max_concurrent", "label": "maximum concurrent checkpoints", "key": "execution.checkpointing.max-concurrent-checkpoints", "type": "int"},
	{"setting": "unaligned", "label": "unaligned checkpoints", "key": "execution.checkpointing.unaligned.enabled", "type": "bool"},
	{"setting": "tolerable_failures", "label": "tolerable checkpoint failures", "key": "execution.checkpointing.tolerable-failed-checkpoints", "type": "int"},
]

same_setting(_, a, b) if a == b

same_setting("tolerable_failures", a, b) if {
	lib.unlimited_failures(a)
	lib.unlimited_failures(b)
}

# SW-CKPT-003 stays quiet where SW-CKPT-001 already says the configuration v does not checkpoint:
# for the interval itself, and for settings left at Flink's default that only matter once it does.
covered_by_ckpt001(s, _, v) if {
	view_checkpointing_off(v)
	s.setting == "interval"
}

covered_by_ckpt001(_, e, v) if {
	view_checkpointing_off(v)
	e.default == true
}

# Heap backends: Flink 1.x's legacy names filesystem and jobmanager are heap state too.
backend_family(v) := "hashmap" if {
	v in {"hashmap", "filesystem", "jobmanager"}
} else := v

# Why a checkpoint location is not durable, or undefined when it is.
nondurable(s) := "a file: URI on the local filesystem, which dies with the machine" if {
	startswith(lower(trim_space(s)), "file:")
} else := "a path without a URI scheme: local disk, which dies with the machine" if {
	not regex.match(`^[A-Za-z][A-Za-z0-9+.-]+:`, trim_space(s))
}

same_location(a, b) if trim_right(trim_space(a), "/") == trim_right(trim_space(b), "/")

_unknown_message(u) := sprintf("%s is not a Flink configuration key: Flink ignores keys it does not know, so it has no effect; did you mean %s?", [u.key, u.suggestion]) if {
	is_string(u.suggestion)
} else := sprintf("%s is not a Flink configuration key: Flink ignores keys it does not know, so it has no effect on Flink; if the job's own code or a plugin reads it, declare it in streamwarden.yaml (flink: {known_keys: [%s]})", [u.key, u.key])

_conflict_reason(c) := "a 2.x key always takes precedence over its deprecated aliases, wherever they are set" if {
	c.wins_by == "2.x-key"
} else := sprintf("neither is the 2.x key %s and Flink falls back to its deprecated keys in a fixed order, %s first", [c.key, c.wins])
