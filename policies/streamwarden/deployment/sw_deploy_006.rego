# Deployment files (SW-DEPLOY): the diff side, the files the base branch's contract names in
# job.deployment against the pull request's. The repository side is in the other sw_deploy_NNN.rego.
#
# Silent unless input.base is an object whose status is "present" (or absent) and whose
# contract is an object: no --base, a contract added by the pull request (status "added") and
# an unparseable base say nothing here.
package streamwarden.deployment

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: A change to the files that configure the job must be reviewed
# description: |
#   job.deployment names the repository files the deployment rules judge as the job's
#   configuration (SW-STATE-012, SW-CKPT-003, SW-DEPLOY-*). A pull request that adds, removes,
#   repoints or reorders an entry changes which files those are: pointing the contract at a
#   benign copy, or dropping the entry, would otherwise hide what the real file says. Fires once
#   per pipeline when head's job.deployment (the entries as written, in order; absent is an
#   empty list) differs from the base's, naming the entries added and removed. In a pull request
#   the files the base contract names (that still exist) are read too and judged against the
#   head contract, so moving the pointer never hides a finding; this rule says the pointer moved.
# custom:
#   id: SW-DEPLOY-006
#   kind: diff
#   severity: warning
#   remediation: |
#     Make sure the files the contract now names are the ones the job is deployed with, and tell
#     whoever deploys it. A file the job no longer uses can be deleted in the same pull request
#     (a file that does not exist is not read); until then it is still checked.
#   example: |
#     # base: job: {deployment: [deploy/config.yaml]}
#     job:
#       deployment: [deploy/config-copy.yaml]
warn contains f if {
	base := lib.diff_base(input)
	head := object.get(input, "contract", null)
	is_object(head)
	old := _diff_entries(base)
	new := _diff_entries(head)
	old != new
	added := [e | some e in new; not e in old]
	removed := [e | some e in old; not e in new]
	f := {
		"rule": "SW-DEPLOY-006",
		"message": sprintf(
			"job.deployment changes from %v in %s to %v (%s): which files configure the job is a reviewed change; the files the base names are still read and checked in this pull request",
			[old, lib.diff_base_name(input), new, _diff_what(added, removed)],
		),
		"path": "job.deployment",
		"value": new,
		"evidence": {"base": old, "head": new, "added": added, "removed": removed},
	}
}

# job.deployment as a list of entries (the loader makes a single string a one-entry list).
_diff_entries(c) := xs if {
	xs := object.get(c, ["job", "deployment"], [])
	is_array(xs)
} else := [x] if {
	x := object.get(c, ["job", "deployment"], null)
	is_string(x)
} else := []

# What the pull request does to the list, for the message.
_diff_what(added, removed) := "repointed: an entry names another file" if {
	count(added) > 0
	count(removed) > 0
} else := "an entry added" if {
	count(added) > 0
} else := "an entry removed" if {
	count(removed) > 0
} else := "the same files in another order: a later file overrides what an earlier one sets"
