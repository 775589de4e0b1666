package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# METADATA
# custom:
#   requires: [facts.deployment]

# METADATA
# title: Deployed checkpoint settings must match the contract
# description: |
#   Compares the checkpoint settings the contract declares (interval, mode, timeout, min_pause,
#   max_concurrent, unaligned, tolerable_failures) with the effective values of the repository's
#   deployment files (execution.checkpointing.*; a key left unset counts as Flink's default) and,
#   from live facts, the running job. One finding per differing setting, naming both values and
#   where each came from. Where the repository does not checkpoint at all (interval unset),
#   SW-CKPT-001 reports it, and this rule does not repeat it for the interval nor for settings
#   left at Flink's default; settings the repository sets explicitly are still compared. A
#   setting the contract does not declare is not compared.
# custom:
#   id: SW-CKPT-003
#   severity: error
#   remediation: |
#     Change the deployment file at the line named in the finding so it matches the contract
#     (or set the key where the finding points when it is unset), or change the contract if the
#     deployment is right.
#   example: |
#     checkpoint: {interval: 60s}                         # contract
#     execution.checkpointing.interval: 30 s              # flinkConfiguration
deny contains f if {
	some s in _dep_ckpt_settings
	want := input.contract.checkpoint[s.setting]
	some v in _dep_views
	e := v[s.key]
	want != e.value # most settings agree: stop before the function calls
	not dep.same_setting(s.setting, want, e.value)
	not dep.covered_by_ckpt001(s, e, v)
	f := dep.finding(
		"SW-CKPT-003", s.key, e,
		sprintf(
			"the %s differs from the contract: the contract says %s (checkpoint.%s) but the repository %s",
			[s.label, dep.show(want, s.type), s.setting, dep.repo_says(e, s.type)],
		),
		{"setting": s.setting, "contract": want, "contract_field": sprintf("checkpoint.%s", [s.setting])},
	)
}
