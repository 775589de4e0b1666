package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: State must not be orphaned by a removed uid
# description: |
#   Flink restores state by operator uid. When a uid that held state at the base is gone, a
#   savepoint taken by the running job has state no operator claims, and Flink refuses the
#   restore (unless told to drop it). Fires for each uid declared at the base
#   (state.operators[].uid, job.sources[].uid, job.sinks[].uid) that head declares in none of
#   those places and that no head operator names in restores_from, unless head lists it in
#   state.dropped and sets state.allow_non_restored_state to true. A uid that only moved
#   between sections (say from state.operators to job.sinks) is still declared. A base
#   operator's restores_from is not a uid of its own: its state was saved under the
#   operator's uid. The finding points at the base section's list in head, with the uid as
#   value.
# custom:
#   id: SW-STATE-006
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the uid, or give the operator that takes over the state restores_from: <old uid>
#     (and setUidHash in the job). If the state may go, list the uid in state.dropped with a
#     reason and set state.allow_non_restored_state: true for that deploy.
#   example: |
#     # base: state.operators: [{uid: orders-dedup, kind: keyed, ...}]
#     state:
#       operators: [{uid: orders-dedup-v2, kind: keyed, ...}]   # no restores_from: orders-dedup
deny contains f if {
	lib.diff_base(input)
	some section in _diff_uid_sections
	some x in lib.list_at(lib.diff_base(input), section.path)
	u := _diff_uid(x)
	not u in _diff_head_claims
	not _diff_released(u)
	f := {
		"rule": "SW-STATE-006",
		"message": sprintf(
			"uid %s (%s in %s) is gone and no operator declares restores_from: %s: its state in the last savepoint would be unclaimed and the restore refused; %s",
			[lib.quote(u), section.name, lib.diff_base_name(input), u, _diff_drop_hint(u)],
		),
		"path": section.name,
		"value": u,
		"evidence": {
			"uid": u,
			"base_section": section.name,
			"listed_in_dropped": u in _diff_head_dropped,
			"allow_non_restored_state": object.get(_diff_head, ["state", "allow_non_restored_state"], null),
		},
	}
}
