package streamwarden.deployment

import rego.v1

# METADATA
# custom:
#   requires: [facts.deployment]

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
