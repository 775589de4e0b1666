package streamwarden.deployment

import rego.v1

# METADATA
# custom:
#   requires: [facts.deployment]

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
