# SW-REC-004 on the contract alone; its diff side (the base branch's backfills against the pull
# request's) is in sw_rec_004_diff.rego.
package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Backfills and forks must be bounded
# description: |
#   A second job writing the same table must be confined, or its snapshots cannot be told
#   apart from the pipeline's (see SW-TABLE-010). The contract side fires for each backfills[]
#   entry with neither a branch nor a complete time range (both from and to); a from without a
#   to is not a boundary. The diff side fires for a fork added without one.
# custom:
#   id: SW-REC-004
#   kind: diff
#   severity: error
#   remediation: |
#     Give the backfill a branch to write to, or a from/to time range (RFC 3339) that bounds
#     the data it rewrites.
#   example: |
#     backfills: [{job: orders-backfill, reason: "replay March"}]   # no branch, no from/to
deny contains f if {
	some idx, backfill in object.get(input.contract, "backfills", [])
	not _bounded(backfill)
	f := {
		"rule": "SW-REC-004",
		"message": sprintf(
			"backfill %s (backfills[%d]) has no boundary: neither a branch nor a from/to time range; add a branch or both from and to",
			[lib.quote(object.get(backfill, "job", null)), idx],
		),
		"path": sprintf("backfills[%d].branch", [idx]),
		"evidence": {
			"job": object.get(backfill, "job", null),
			"branch": object.get(backfill, "branch", null),
			"from": object.get(backfill, "from", null),
			"to": object.get(backfill, "to", null),
		},
	}
}
