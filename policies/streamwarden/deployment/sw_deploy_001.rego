package streamwarden.deployment

import rego.v1

# METADATA
# custom:
#   requires: [facts.deployment]

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
