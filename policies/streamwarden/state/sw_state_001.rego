package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Stateful operators must have stable uids
# description: |
#   Flink maps savepoint state to operators by uid; an operator without one gets a generated id
#   that changes with the job graph, and its state is lost on the next upgrade. Fires for each
#   declared stateful operator (state.operators[]) without a uid, and, when
#   state.auto_generated_uids is forbidden, for each job.sources[] or job.sinks[] without a
#   uid (sources and sinks hold state too: offsets, split enumerators, committers). The
#   repository side fires when auto_generated_uids is forbidden but the deployment does not
#   set pipeline.auto-generate-uids to false.
# custom:
#   id: SW-STATE-001
#   severity: error
#   remediation: |
#     Give every stateful operator, source and sink a uid in the job (.uid("...") or SQL
#     operator uids), declare the same uid in the contract, and set
#     pipeline.auto-generate-uids to false.
#   example: |
#     state:
#       auto_generated_uids: forbidden
#       operators: [{kind: keyed, key: [order_id], ttl: 24h}]   # no uid
deny contains f if {
	some idx, op in _state_operators
	lib.blank(object.get(op, "uid", null))
	f := {
		"rule": "SW-STATE-001",
		"message": sprintf(
			"state.operators[%d] declares state but has no uid: its state cannot be matched on restore; give the operator a uid in the job and declare it here",
			[idx],
		),
		"path": sprintf("state.operators[%d].uid", [idx]),
		"evidence": {"index": idx, "uid": object.get(op, "uid", null), "kind": object.get(op, "kind", null)},
	}
}

# SW-STATE-001: with auto_generated_uids forbidden, sources and sinks need uids too
deny contains f if {
	_state.auto_generated_uids == "forbidden"
	some section in ["sources", "sinks"]
	some idx, item in object.get(input.contract, ["job", section], [])
	lib.blank(object.get(item, "uid", null))
	f := {
		"rule": "SW-STATE-001",
		"message": sprintf(
			"job.%s[%d] (%s) has no uid while state.auto_generated_uids is forbidden: its state (offsets, splits, commits) cannot be matched on restore; declare the uid the job sets",
			[section, idx, object.get(item, "name", "unnamed")],
		),
		"path": sprintf("job.%s[%d].uid", [section, idx]),
		"evidence": {
			"section": section,
			"index": idx,
			"name": object.get(item, "name", null),
			"uid": object.get(item, "uid", null),
			"auto_generated_uids": "forbidden",
		},
	}
}
