package streamwarden.facts

import rego.v1

import data.streamwarden.lib

# METADATA
# title: Facts that rules need must be gathered
# description: |
#   Fires for each source in input.facts (deployment, flink, iceberg, data, savepoint, kafka) that is
#   configured but not available: the rules that need it are silent, so the gap is reported
#   instead, naming the source and its error. An error in gate mode (the gate fails closed), a
#   warning otherwise. The path is facts.<source>; value is the source name, so the
#   fingerprint does not change with the error text. A job.deployment entry that names a file
#   that does not exist, or one that cannot be read (invalid YAML, a path outside the
#   repository, a file type streamwarden does not read, not a regular file), is an error in
#   every mode (a typo or a broken file must not switch the deployment rules off), located at
#   that entry (path job.deployment[i], its line); the other files are still read and checked.
# custom:
#   id: SW-FACT-001
#   severity: warning
#   remediation: |
#     Fix what the message names: access to the source (URL, credentials, network, timeout in
#     streamwarden.yaml), the path of a job.deployment entry (relative to the contract's
#     directory) or the file it names, then run the check again.
#   example: |
#     facts: {flink: {configured: true, available: false, error: "connection refused"}}
warn contains f if {
	some source, fact in input.facts
	is_object(fact)
	fact.configured == true
	fact.available == false
	object.get(fact, "refused", false) != true # SW-FACT-002 reports a refusal, once per contract
	not _only_missing_files(source, fact)
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
		lib.gate_severity,
	)
}

# SW-FACT-001: a job.deployment entry that names a file that does not exist. The finding has no
# file of its own, so it lands on the contract, at the line of job.deployment[i].
deny contains f if {
	some m in object.get(input, ["facts", "deployment", "missing"], [])
	f := {
		"rule": "SW-FACT-001",
		"severity": "error",
		"message": sprintf(
			"job.deployment[%d] names %s, which does not exist (%s); the deployment rules cannot check it: fix the path (relative to the contract's directory) or add the file",
			[m.index, m.entry, m.file],
		),
		"path": sprintf("job.deployment[%d]", [m.index]),
		"value": m.entry,
		"evidence": {"source": "deployment", "entry": m.entry, "file": m.file, "error": "file does not exist"},
	}
}

# SW-FACT-001: a job.deployment entry naming a file that cannot be read. Located like a missing
# file: at that entry of the contract; the reason (with the file's own line where there is one)
# is in the message.
deny contains f if {
	some u in object.get(input, ["facts", "deployment", "unreadable"], [])
	f := {
		"rule": "SW-FACT-001",
		"severity": "error",
		"message": sprintf(
			"job.deployment[%d] names %s, which cannot be read: %s; the deployment rules cannot check it: fix the file or the entry",
			[u.index, u.entry, u.error],
		),
		"path": sprintf("job.deployment[%d]", [u.index]),
		"value": u.entry,
		"evidence": {"source": "deployment", "entry": u.entry, "file": u.file, "error": u.error},
	}
}

# SW-FACT-001: the manifests a declared backfill's range is judged from could not be read
# (facts.iceberg.backfills, SW-TABLE-015): the range was not checked, so the gap is reported
# instead, at the declaration's range; an error in gate mode, as for a source that is down.
warn contains f if {
	input.facts.iceberg.available == true
	some item in object.get(input.facts.iceberg, ["backfills", "items"], [])
	err := item.range.error
	is_string(err)
	f := object.union(
		{
			"rule": "SW-FACT-001",
			"message": sprintf(
				"iceberg facts could not be gathered: the manifests of %s %s (declared at %s) could not be read (%s); SW-TABLE-015 could not judge its range",
				[item.kind, _fact_backfill_name(item), item.path, err],
			),
			"path": sprintf("%s.range", [item.path]),
			"value": "iceberg",
			"evidence": {"source": "iceberg", "error": err, "declared_at": item.path},
		},
		lib.gate_severity,
	)
}

_fact_backfill_name(item) := lib.quote(item.job) if is_string(item.job) else := concat(", ", item.job_ids)
