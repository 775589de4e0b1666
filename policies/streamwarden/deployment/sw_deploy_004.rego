package streamwarden.deployment

import rego.v1

# METADATA
# custom:
#   requires: [facts.deployment]

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
