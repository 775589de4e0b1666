package streamwarden.schema

import rego.v1

# METADATA
# custom:
#   requires: [base]

# METADATA
# title: Schema compatibility must not be weakened silently
# description: |
#   The schema_evolution section in force is the base's: a pull request that weakens it is
#   judged by the old values, and the weakening itself must be seen and approved. Fires when
#   head's schema_evolution.compatibility is weaker than the base's (absent means backward):
#   full and full_transitive > backward/forward (and their transitive forms) > none; a
#   transitive mode made non-transitive (even full_transitive to full); and a change of
#   direction between backward and forward (transitive or not), since the consumers or
#   producers that relied on the old direction lose their protection. Also fires when
#   allow_renames goes from false/absent to true, when coordinate_with_state goes from true
#   to false/absent, and when protect_consumers goes from true/absent to false. No finding
#   when both sides lack the section (both mean the defaults).
# custom:
#   id: SW-SCHEMA-009
#   kind: diff
#   severity: warning
#   remediation: |
#     Keep the section, or make the weakening a separate pull request that the table's
#     consumers approve (it takes effect once merged).
#   example: |
#     # base: schema_evolution: {compatibility: full_transitive}
#     schema_evolution: {compatibility: backward}
warn contains f if {
	_evo_base
	count(_evo_weakening_reasons) > 0
	reasons := sort([r | some r in _evo_weakening_reasons])
	f := {
		"rule": "SW-SCHEMA-009",
		"message": sprintf(
			"schema_evolution.compatibility goes from %s in %s to %s (%s): this pull request is still judged by %s, and the weakening needs the consumers' approval",
			[_evo_mode, _evo_base_name, _evo_head_mode, concat("; ", reasons), _evo_mode],
		),
		"path": "schema_evolution.compatibility",
		"value": _evo_head_mode,
		"evidence": {"base": _evo_mode, "head": _evo_head_mode, "reasons": reasons},
	}
}

# SW-SCHEMA-009: renames allowed
warn contains f if {
	_evo_base
	not _evo_allow_renames
	object.get(_evo_head_section, "allow_renames", false) == true
	f := {
		"rule": "SW-SCHEMA-009",
		"message": sprintf(
			"schema_evolution.allow_renames goes from %v in %s to true: consumers that read by name will lose columns on later renames; this pull request is still judged with renames forbidden",
			[object.get(_evo_base_section, "allow_renames", "absent (false)"), _evo_base_name],
		),
		"path": "schema_evolution.allow_renames",
		"value": true,
		"evidence": {"base": object.get(_evo_base_section, "allow_renames", null), "head": true},
	}
}

# SW-SCHEMA-009: table and state no longer coordinated
warn contains f if {
	_evo_coordinate
	object.get(_evo_head_section, "coordinate_with_state", false) != true
	head := object.get(_evo_head_section, "coordinate_with_state", null)
	f := {
		"rule": "SW-SCHEMA-009",
		"message": sprintf(
			"schema_evolution.coordinate_with_state goes from true in %s to %v: table schema changes would no longer require a state schema_version bump; this pull request is still judged with it on",
			[_evo_base_name, head],
		),
		"path": "schema_evolution.coordinate_with_state",
		"value": head,
		"evidence": {"base": true, "head": head},
	}
}

# SW-SCHEMA-009: consumers no longer protected
warn contains f if {
	_evo_base
	_evo_protecting(_evo_base_section)
	not _evo_protecting(_evo_head_section)
	f := {
		"rule": "SW-SCHEMA-009",
		"message": sprintf(
			"schema_evolution.protect_consumers goes from %v in %s to false: columns the table's consumers read could then be removed or made optional without a breaking finding; this pull request is still judged with them protected",
			[object.get(_evo_base_section, "protect_consumers", "absent (true)"), _evo_base_name],
		),
		"path": "schema_evolution.protect_consumers",
		"value": false,
		"evidence": {"base": object.get(_evo_base_section, "protect_consumers", null), "head": false},
	}
}
