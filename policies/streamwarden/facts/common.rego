# Fact-gathering gaps (SW-FACT-001). A source that is not configured stays quiet; a configured
# source that could not be read is reported, as an error in the gate (input.mode == "gate",
# which fails closed) and as a warning everywhere else (input.mode absent included). A
# job.deployment entry naming a file that does not exist (facts.deployment.missing) or that
# cannot be read (facts.deployment.unreadable: invalid YAML, outside the repository, an unknown
# file type, not a regular file) is an error in every mode, reported at that entry of the
# contract, not at facts.deployment: one broken file must not switch the deployment rules off.
package streamwarden.facts

import rego.v1

_access_path(access) := access.field if {
	access.field in {"table.catalog", "table.identifier"}
} else := "table.identifier"

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
