package streamwarden.deployment

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

_td_job(entries) := {"job": {"name": "orders-enrichment", "deployment": entries}}

_td_006(inp) := {f | some f in warn with input as inp; f.rule == "SW-DEPLOY-006"}

_td_real := "deploy/config.yaml"

_td_copy := "deploy/config-copy.yaml"

_td_sql := "deploy/job.sql"

# ---------------------------------------------------------------- silent cases

test_deploydiff_unchanged_example_passes if {
	inp := object.union(lib.example_input, {"base": lib.base_doc(lib.example_contract)})
	count(_td_006(inp)) == 0
}

test_deploydiff_same_entries_pass if {
	count(_td_006(lib.diff_input(_td_job([_td_real, _td_sql]), _td_job([_td_real, _td_sql])))) == 0
	count(_td_006(lib.diff_input({"job": {}}, {"job": {"name": "x"}}))) == 0 # absent on both sides
	count(_td_006(lib.diff_input({}, {}))) == 0
}

test_deploydiff_a_string_is_a_one_entry_list if {
	count(_td_006(lib.diff_input(_td_job(_td_real), _td_job([_td_real])))) == 0
	count(_td_006(lib.diff_input(_td_job([_td_real]), _td_job(_td_real)))) == 0
}

test_deploydiff_silent_without_base if {
	every base in [
		null,
		{"status": "added", "contract": null},
		{"status": "unparseable", "error": "bad", "contract": null},
		object.union(lib.base_doc(_td_job([_td_real])), {"status": "added"}),
		"junk",
	] {
		count(_td_006({"contract": _td_job([_td_copy]), "base": base})) == 0
	}
	count(_td_006({"contract": _td_job([_td_copy])})) == 0
}

test_deploydiff_silent_for_a_removed_pipeline if {
	inp := {"contract": null, "base": object.union(lib.base_doc(_td_job([_td_real])), {"status": "removed"})}
	count(_td_006(inp)) == 0
}

# ---------------------------------------------------------------- fail cases

test_deploydiff_repointed_entry_fires if {
	fs := _td_006(lib.diff_input(_td_job([_td_real]), _td_job([_td_copy])))
	count(fs) == 1
	some f in fs
	f.path == "job.deployment"
	f.value == [_td_copy]
	f.evidence == {"base": [_td_real], "head": [_td_copy], "added": [_td_copy], "removed": [_td_real]}
	f.message == `job.deployment changes from ["deploy/config.yaml"] in the base (origin/main) to ["deploy/config-copy.yaml"] (repointed: an entry names another file): which files configure the job is a reviewed change; the files the base names are still read and checked in this pull request`
}

test_deploydiff_removed_entry_fires if {
	fs := _td_006(lib.diff_input(_td_job([_td_real, _td_sql]), _td_job([_td_sql])))
	some f in fs
	f.evidence.removed == [_td_real]
	f.evidence.added == []
	contains(f.message, "(an entry removed)")
}

test_deploydiff_dropped_list_fires if {
	fs := _td_006(lib.diff_input(_td_job([_td_real]), {"job": {"name": "orders-enrichment"}}))
	some f in fs
	f.value == []
	f.evidence.removed == [_td_real]
}

test_deploydiff_added_entry_fires if {
	fs := _td_006(lib.diff_input({"job": {}}, _td_job([_td_real])))
	some f in fs
	f.evidence.added == [_td_real]
	contains(f.message, "(an entry added)")
}

test_deploydiff_reordered_entries_fire if {
	fs := _td_006(lib.diff_input(_td_job([_td_real, _td_sql]), _td_job([_td_sql, _td_real])))
	some f in fs
	f.evidence.added == []
	f.evidence.removed == []
	contains(f.message, "a later file overrides what an earlier one sets")
}

test_deploydiff_base_without_status_is_compared if {
	fs := _td_006({"contract": _td_job([_td_copy]), "base": {"contract": _td_job([_td_real])}})
	some f in fs
	contains(f.message, "in the base to")
}
