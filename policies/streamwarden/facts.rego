# Fact-gathering gaps (SW-FACT-001). A source that is not configured stays quiet; a configured
# source that could not be read is reported, as an error in the gate (input.mode == "gate",
# which fails closed) and as a warning everywhere else (input.mode absent included). A
# job.deployment entry naming a file that does not exist (facts.deployment.missing) or that
# cannot be read (facts.deployment.unreadable: invalid YAML, outside the repository, an unknown
# file type, not a regular file) is an error in every mode, reported at that entry of the
# contract, not at facts.deployment: one broken file must not switch the deployment rules off.
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
		_severity,
	)
}

# METADATA
# title: A contract reads only the tables its environment lets it read
# description: |
#   The environment of streamwarden.yaml (in a pull request: the trusted ref's) decides which
#   catalogs and tables a contract may read: iceberg.catalogs (unless use_pyiceberg_config) and the
#   grants of iceberg.allow (without them, in a pull request, only the table the contract's base
#   version reads). input.facts.access holds that decision; when it refuses, nothing of the table
#   was read (facts.iceberg and facts.data say refused) and this finding fails the run in every
#   mode, at the contract field that names what was refused (table.catalog or table.identifier).
#   A fail-closed rule, like SW-FACT-001: it cannot be waived (SW-WAIVER-001 refuses the waiver).
# custom:
#   id: SW-FACT-002
#   severity: error
#   remediation: |
#     Name a table the environment grants to this contract, or have whoever owns streamwarden.yaml
#     on the default branch grant it (environments.<env>.iceberg.allow: a namespace or table, its
#     catalog, the owners) or configure the catalog (iceberg.catalogs).
#   example: |
#     facts: {access: {allowed: false, catalog: lake, table: sales.orders, owner: web-analytics, field: table.identifier, reason: "no entry of iceberg.allow grants lake.sales.orders to owner 'web-analytics'", grant: null}}
deny contains f if {
	access := input.facts.access
	access.allowed == false
	f := {
		"rule": "SW-FACT-002",
		"severity": "error",
		"message": sprintf(
			"the environment does not let this contract read %s.%s: %s; no facts of the table were gathered",
			[access.catalog, access.table, _error_text(access.reason)],
		),
		"path": _access_path(access),
		"value": sprintf("%s.%s", [access.catalog, access.table]),
		"evidence": {
			"catalog": access.catalog, "table": access.table,
			"owner": access.owner, "reason": access.reason,
		},
	}
}

_access_path(access) := access.field if {
	access.field in {"table.catalog", "table.identifier"}
} else := "table.identifier"

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

# Every entry of job.deployment is missing or unreadable: each has its error above; nothing else
# to report.
_only_missing_files("deployment", fact) if {
	failed := count(object.get(fact, "missing", [])) + count(object.get(fact, "unreadable", []))
	failed > 0
	failed == count(object.get(input, ["contract", "job", "deployment"], []))
}

_error_text(e) := e if {
	is_string(e)
	trim_space(e) != ""
} else := "no error was reported"
