package streamwarden.state

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Keyed state must expire
# description: |
#   Keyed state without a time-to-live grows with every new key and is never cleaned up.
#   Fires for each state.operators[] entry with kind keyed and no positive ttl, unless the
#   deployment files (when they could be read) set a positive table.exec.state.ttl (the SQL
#   state TTL, whose Flink default 0 means never expire).
# custom:
#   id: SW-STATE-003
#   severity: error
#   remediation: |
#     Declare a ttl on the operator (and enable StateTtlConfig on its state descriptors), or,
#     for SQL jobs, set table.exec.state.ttl to a positive duration in the deployment.
#   example: |
#     state:
#       operators: [{uid: orders-dedup, kind: keyed, key: [order_id]}]   # no ttl
deny contains f if {
	some idx, op in _state_operators
	op.kind == "keyed"
	not lib.positive(object.get(op, "ttl", null))
	not _sql_state_ttl
	f := {
		"rule": "SW-STATE-003",
		"message": sprintf(
			"keyed state of operator %s (state.operators[%d]) has %s and the deployment sets no positive table.exec.state.ttl: the state grows forever; declare a ttl such as 24h",
			[lib.quote(object.get(op, "uid", null)), idx, _ttl_text(object.get(op, "ttl", null))],
		),
		"path": sprintf("state.operators[%d].ttl", [idx]),
		"evidence": {
			"uid": object.get(op, "uid", null),
			"ttl": object.get(op, "ttl", null),
			"table.exec.state.ttl": object.get(input, ["facts", "deployment", "config", "table.exec.state.ttl", "value"], null),
			"deployment_available": object.get(input, ["facts", "deployment", "available"], false),
		},
	}
}
