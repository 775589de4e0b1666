# Repository deployment files (SW-DEPLOY) and the helpers every repository-side rule uses.
# input.facts.deployment is built by streamwarden/facts/deployment.py: the effective Flink
# configuration keyed by the 2.x key, each entry with its provenance (file, line, key as written,
# raw text) or "default": true where the repository leaves the key unset (Flink's default then).
# The repository-side bodies of SW-CKPT-* and SW-STATE-* live in checkpoint_deployment.rego and
# state_deployment.rego and call the helpers below.
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

stateful_operators := object.get(input.contract, ["state", "operators"], [])

exactly_once_sinks := lib.exactly_once_sink_labels(input.contract)

# Why the pipeline must checkpoint (SW-CKPT-001, SW-CKPT-004).
checkpointing_reasons contains sprintf("it keeps state (%d operators under state.operators)", [count(stateful_operators)]) if {
	count(stateful_operators) > 0
}

checkpointing_reasons contains sprintf("it has exactly-once sinks (%s)", [concat(", ", exactly_once_sinks)]) if {
	count(exactly_once_sinks) > 0
}

checkpointing_reasons contains sprintf("the contract declares checkpoint.interval %s", [lib.fmt_ms(i)]) if {
	i := input.contract.checkpoint.interval
	lib.positive(i)
}

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

# --- SW-DEPLOY rules ---------------------------------------------------------------------------

# METADATA
# title: Deployment files should only set keys Flink knows
# description: |
#   Flink ignores configuration keys it does not know, silently: a typo such as
#   execution.checkpointing.intervall (or execution.checkpoints.dir) leaves the real setting at its
#   default. Fires for each key in a deployment file (config.yaml, flink-conf.yaml, a CR's
#   flinkConfiguration, a SQL SET) that is not a key of Flink 1.15 to 2.3 (the key sets of Flink's
#   option classes, with their deprecated names), of the Kubernetes operator, the autoscaler or
#   Stateful Functions, nor below a namespace whose names the user chooses (a metric reporter's
#   metrics.reporter.NAME., flink.hadoop., the file systems' s3., gs., fs.azure. ... pass-through
#   keys). Keys the job's own code or a plugin reads are declared in streamwarden.yaml
#   (flink.known_keys) and are then accepted.
# custom:
#   id: SW-DEPLOY-001
#   severity: warning
#   remediation: |
#     Fix the key's spelling (the message suggests the closest Flink key when one is close), or
#     remove it. If the job's own code or a plugin reads the key, declare it in streamwarden.yaml:
#     flink: {known_keys: [the key, or a glob such as acme.*]}.
#   example: |
#     flinkConfiguration:
#       execution.checkpointing.intervall: "60 s"
warn contains f if {
	available
	some u in facts.unknown_keys
	f := {
		"rule": "SW-DEPLOY-001",
		"message": _unknown_message(u),
		"path": u.key,
		"source": "deployment",
		"file": u.file,
		"line": u.line,
		"value": u.key,
		"evidence": {"key": u.key, "suggestion": object.get(u, "suggestion", null)},
	}
}

_unknown_message(u) := sprintf("%s is not a Flink configuration key: Flink ignores keys it does not know, so it has no effect; did you mean %s?", [u.key, u.suggestion]) if {
	is_string(u.suggestion)
} else := sprintf("%s is not a Flink configuration key: Flink ignores keys it does not know, so it has no effect on Flink; if the job's own code or a plugin reads it, declare it in streamwarden.yaml (flink: {known_keys: [%s]})", [u.key, u.key])

# METADATA
# title: A deprecated key and its 2.x name must not disagree
# description: |
#   Fires when a Flink 2.x key and one of its deprecated 1.x aliases (for example
#   execution.checkpointing.num-retained and state.checkpoints.num-retained) are both set in the
#   deployment files to different values. Flink reads the 2.x key and ignores the alias, wherever
#   each is set (even when the alias is in a higher-precedence file such as a SQL SET); between
#   two aliases alone it takes the first in its fallback order. The message says which value Flink
#   uses and why; the finding points at the line Flink ignores.
# custom:
#   id: SW-DEPLOY-002
#   severity: warning
#   remediation: |
#     Delete the deprecated key and keep one value under the 2.x name.
#   example: |
#     state.checkpoints.num-retained: 5
#     execution.checkpointing.num-retained: 3
warn contains f if {
	available
	some c in facts.conflicts
	f := {
		"rule": "SW-DEPLOY-002",
		"message": sprintf(
			"%s is %v at %s:%v but %s is %v at %s:%v; Flink uses %v from %s because %s. Remove %s and keep one value",
			[
				c.alias, c.alias_raw, c.alias_file, c.alias_line, c.wins, c.raw, c.file, c.line,
				c.raw, c.wins, _conflict_reason(c), c.alias,
			],
		),
		"path": c.key,
		"source": "deployment",
		"file": c.alias_file,
		"line": c.alias_line,
		"value": {"alias": c.alias, "alias_value": c.alias_value, "value": c.value},
		"evidence": c,
	}
}

_conflict_reason(c) := "a 2.x key always takes precedence over its deprecated aliases, wherever they are set" if {
	c.wins_by == "2.x-key"
} else := sprintf("neither is the 2.x key %s and Flink falls back to its deprecated keys in a fixed order, %s first", [c.key, c.wins])

# METADATA
# title: Deployment values must be values Flink accepts
# description: |
#   Fires for each effective Flink setting in the deployment files whose value Flink would refuse
#   at start-up: a duration or memory size it cannot parse (1h 30min, 60 secs and 5, ten
#   minutes), a boolean other than true/false (yes, on), an enum constant Flink does not know
#   (exactly-once instead of EXACTLY_ONCE), a number out of range. Rules that read the key
#   stay silent for it, since its value is unknown.
# custom:
#   id: SW-DEPLOY-003
#   severity: error
#   remediation: |
#     Write the value in Flink's syntax: durations as a number and a unit (500 ms, 60 s, 1 min,
#     2 h, 1 d) or ISO-8601 (PT1M); sizes as a number and b, kb, mb, gb or tb; booleans true or
#     false; enum values as Flink's constant names (EXACTLY_ONCE).
#   example: |
#     execution.checkpointing.interval: 1h 30min
deny contains f if {
	available
	some p in facts.problems
	p.code == "invalid-value"
	f := {
		"rule": "SW-DEPLOY-003",
		"message": sprintf("%s; Flink would refuse to start the job with this value", [p.message]),
		"path": object.get(p, "key", ""),
		"source": "deployment",
		"file": p.file,
		"line": p.line,
		"value": object.get(p, "raw", null),
		"evidence": p,
	}
}

# METADATA
# title: Deployment files must be unambiguous
# description: |
#   Fires for a deployment file that streamwarden could read only in part, so the effective
#   configuration may not be what the reader thinks: several Flink resources in one manifest
#   (the one for this job is used), several YAML documents in a Flink configuration file (Flink
#   refuses the file: an error), a config.yaml that Flink 2.x's loader refuses as a whole (a key
#   without a value, a tag it cannot construct, a key that is not a string: an error), a YAML
#   merge key (<<) in a config.yaml (Flink 2.x reads it as a key of its own and merges nothing: an
#   error), a line of a legacy flink-conf.yaml that Flink 1.x cannot split
#   at ': ' or whose key or value is empty (Flink ignores it: an error when it holds a colon),
#   nested blocks in a legacy flink-conf.yaml (Flink 1.x ignores the block's first line and
#   reads the indented lines as keys of their own: an error), a legacy flink-conf.yaml for a
#   resource that runs Flink 2.x (which reads config.yaml only: none of it applies, an error), a
#   key set twice in one file, a
#   manifest without a FlinkDeployment, FlinkSessionJob or FlinkBlueGreenDeployment, a SQL
#   SET statement that cannot be read, a SET or RESET after the last job of a SQL script (a SET
#   applies only to the statements after it, so that one applies to nothing: set-after-last-job),
#   a SET inside a statement set (Flink refuses the script: an error) or a statement set without
#   END (never submitted). A resource of the operator's API group without Flink
#   configuration (FlinkStateSnapshot) is named and skipped with an info finding, and so is a
#   value that is a template placeholder (${VAR}, $VAR, {{ .Values.x }}): it is decided at deploy
#   time and no rule judges it.
# custom:
#   id: SW-DEPLOY-004
#   severity: warning
#   remediation: |
#     Keep one Flink resource per manifest (or name it after the contract's job), one document
#     per config file, flat keys in flink-conf.yaml, each key once, and SET 'key' = 'value'; before
#     the job (INSERT, statement set) it is meant for.
#   example: |
#     job: {deployment: [deploy/all-jobs.yaml]}   # three FlinkDeployments in one file
warn contains f if {
	available
	some p in facts.problems
	p.code != "invalid-value"
	f := {
		"rule": "SW-DEPLOY-004",
		"severity": object.get(p, "severity", "warning"),
		"message": p.message,
		"path": object.get(p, "key", ""),
		"source": "deployment",
		"file": p.file,
		"line": p.line,
		"value": p.code,
		"evidence": p,
	}
}

# METADATA
# title: The deployed state backend and checkpoint location must match the contract
# description: |
#   Fires when the deployment's effective state.backend.type (Flink's default hashmap when
#   unset) differs from the contract's state.backend, or its execution.checkpointing.dir differs
#   from the contract's checkpoint.storage (compared without a trailing slash; a missing or
#   non-durable directory is SW-CKPT-004's). The contract is then a false description of the
#   job. The other checkpoint settings are SW-CKPT-003's.
# custom:
#   id: SW-DEPLOY-005
#   severity: error
#   remediation: |
#     Make the deployment match the contract (state.backend.type, execution.checkpointing.dir),
#     or change the contract if the deployment is right.
#   example: |
#     state: {backend: rocksdb}            # contract
#     state.backend.type: hashmap          # flinkConfiguration
deny contains f if {
	want := input.contract.state.backend
	some e in settings("state.backend.type")
	backend_family(e.value) != want
	f := finding(
		"SW-DEPLOY-005", "state.backend.type", e,
		sprintf("the state backend differs from the contract: the contract says %s (state.backend) but the repository %s", [want, repo_says(e, "name")]),
		{"contract": want, "contract_field": "state.backend"},
	)
}

# SW-DEPLOY-005: checkpoint location
deny contains f if {
	want := input.contract.checkpoint.storage
	is_string(want)
	some e in settings("execution.checkpointing.dir")
	is_string(e.value)
	not nondurable(e.value)
	not same_location(want, e.value)
	f := finding(
		"SW-DEPLOY-005", "execution.checkpointing.dir", e,
		sprintf("the checkpoint location differs from the contract: the contract says %s (checkpoint.storage) but the repository %s", [want, repo_says(e, "string")]),
		{"contract": want, "contract_field": "checkpoint.storage"},
	)
}
