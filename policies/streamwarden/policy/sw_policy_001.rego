# Repository-level rules, evaluated once per pull-request check with input.repository (see run.py).
package streamwarden.policy

import rego.v1

# METADATA
# title: Policy and configuration changes are judged by the trusted ref
# description: |
#   The pull request changes a Rego policy or `streamwarden.yaml` (which lists the policy
#   directories and `fail_on`). The check of this pull request used the versions from the trusted
#   ref (`--trusted-ref`, by default the base branch), so a change cannot weaken the check it is
#   judged by; reviewers must still read the change itself, because it applies from the next
#   pull request on.
# custom:
#   id: SW-POLICY-001
#   kind: diff
#   severity: warning
#   remediation: |
#     Review the policy change on its own merits; merge it separately from pipeline changes so
#     the pipelines are checked by the policy the team agreed on.
#   example: |
#     # head changes policies/custom/acme.rego: deny -> warn
warn contains f if {
	some change in input.repository.policy_changes
	f := {
		"rule": "SW-POLICY-001",
		"message": sprintf(
			"%s %s is %s by this pull request; %s",
			[_kind(change), change.file, change.change, _judged(change)],
		),
		"path": change.file,
		"file": change.file,
		"line": 1,
		"source": "diff",
		"value": change.change,
		"evidence": {"file": change.file, "change": change.change, "trusted_ref": input.repository.trusted_ref},
	}
}

_kind(change) := "configuration" if change.kind == "configuration"

else := "policy"

# a configuration the trusted ref does not have is not used: the defaults are
_judged(change) := sprintf(
	"the trusted ref %s has none, so the check used the defaults (fail_on: error, contracts/**/*.yaml, no environment)",
	[input.repository.trusted_ref],
) if {
	change.kind == "configuration"
	change.change == "added"
}

else := sprintf("it was evaluated as committed on the trusted ref %s", [input.repository.trusted_ref])
