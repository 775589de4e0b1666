# Fact-gathering gaps (SW-FACT-001). A source that is not configured stays quiet; a configured
# source that could not be read is reported, as an error in the gate (input.mode == "gate",
# which fails closed) and as a warning everywhere else (input.mode absent included).
package streamwarden.facts

import rego.v1

_severity := {"severity": "error"} if {
	input.mode == "gate"
} else := {}

# METADATA
# title: Facts that rules need must be gathered
# description: |
#   Fires for each source in input.facts (deployment, flink, iceberg, data, savepoint) that is
#   configured but not available: the rules that need it are silent, so the gap is reported
#   instead, naming the source and its error. An error in gate mode (the gate fails closed), a
#   warning otherwise. The path is facts.<source>; value is the source name, so the
#   fingerprint does not change with the error text.
# custom:
#   id: SW-FACT-001
#   severity: warning
#   remediation: |
#     Fix access to the source named in the message (URL, credentials, network, timeout in
#     streamwarden.yaml, or the files named by job.deployment), then run the check again.
#   example: |
#     facts: {flink: {configured: true, available: false, error: "connection refused"}}
warn contains f if {
	some source, fact in input.facts
	is_object(fact)
	fact.configured == true
	fact.available == false
	err := object.get(fact, "error", null)
	f := object.union(
		{
			"rule": "SW-FACT-001",
			"message": sprintf(
				"%s facts could not be gathered: %s; rules that need them were not evaluated",
				[source, _error_text(err)],
			),
			"path": sprintf("facts.%s", [source]),
			"value": source,
			"evidence": {"source": source, "error": err},
		},
		_severity,
	)
}

_error_text(e) := e if {
	is_string(e)
	trim_space(e) != ""
} else := "no error was reported"
