package streamwarden.waiver

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

# 2027-12-31 ends at 1830297600000 (the example's waiver); one day is 86400000 ms.
_tw_ret := {"rule": "SW-RET-002", "reason": "bucket migration", "expires": "2027-12-31", "approved_by": "data-platform", "expires_end_ms": 1830297600000}

_tw_ckpt := {"rule": "SW-CKPT-008", "reason": "flaky storage", "expires": "2027-01-31", "approved_by": "sre", "expires_end_ms": 1801440000000}

_tw_in(base_waivers, head_waivers) := {
	"contract": {"waivers": head_waivers},
	"base": lib.base_doc({"waivers": base_waivers}),
	"now_ms": 1764000000000,
}

_tw_002(findings) := {f | some f in findings; f.rule == "SW-WAIVER-002"}

# ---------------------------------------------------------------- silent cases

test_waiverdiff_unchanged_example_passes if {
	inp := object.union(lib.example_input, {"base": lib.base_doc(lib.example_contract)})
	warned := warn with input as inp
	count(warned) == 0
}

test_waiverdiff_silent_without_base if {
	every base in [
		null,
		{"status": "added", "contract": null},
		{"status": "unparseable", "error": "bad", "contract": null},
		object.union(lib.base_doc({"waivers": []}), {"status": "added"}),
		"junk",
	] {
		inp := {"contract": {"waivers": [_tw_ret]}, "base": base}
		warned := warn with input as inp
		count(warned) == 0
	}
	inp2 := {"contract": {"waivers": [_tw_ret]}}
	warned2 := warn with input as inp2
	count(warned2) == 0
}

test_waiverdiff_base_without_status_is_compared if {
	inp := {"contract": {"waivers": [_tw_ret]}, "base": {"contract": {}}}
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-WAIVER-002"
	contains(f.message, "once it is on the base")
}

test_waiverdiff_same_waivers_pass if {
	inp := _tw_in([_tw_ret, _tw_ckpt], [_tw_ckpt, _tw_ret])
	warned := warn with input as inp
	count(warned) == 0
}

test_waiverdiff_reason_or_approver_change_passes if {
	head := object.union(_tw_ret, {"reason": "another reason", "approved_by": "someone-else"})
	inp := _tw_in([_tw_ret], [head])
	warned := warn with input as inp
	count(warned) == 0
}

test_waiverdiff_shortened_or_removed_passes if {
	shorter := object.union(_tw_ret, {"expires": "2027-06-30", "expires_end_ms": 1814400000000})
	inp := _tw_in([_tw_ret, _tw_ckpt], [shorter])
	warned := warn with input as inp
	count(warned) == 0
}

# ---------------------------------------------------------------- SW-WAIVER-002

test_waiver002_added if {
	inp := _tw_in([_tw_ret], [_tw_ret, _tw_ckpt])
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-WAIVER-002"
	f.path == "waivers[1]"
	f.value == "SW-CKPT-008"
	f.evidence == {"waiver_index": 1, "rule": "SW-CKPT-008", "change": "added", "expires": "2027-01-31", "base_expires": [], "approved_by": "sre"}
	contains(f.message, `waiver 1 for "SW-CKPT-008" is added by this pull request (expires 2027-01-31, approved by sre)`)
	count(_tw_002(warned)) == 1
}

test_waiver002_added_to_a_base_without_waivers if {
	every base in [{}, {"waivers": "junk"}, {"waivers": ["junk"]}] {
		inp := {"contract": {"waivers": [_tw_ret]}, "base": lib.base_doc(base)}
		warned := warn with input as inp
		lib.rule_paths(warned, "SW-WAIVER-002") == {"waivers[0]"}
	}
}

test_waiver002_added_even_when_invalid if {
	inp := _tw_in([], [{"rule": "SW-CKPT-008"}])
	warned := warn with input as inp
	some f in warned
	f.evidence.change == "added"
	f.evidence.expires == null
}

test_waiver002_extended if {
	later := object.union(_tw_ret, {"expires": "2028-01-01", "expires_end_ms": 1830384000000})
	inp := _tw_in([_tw_ret], [later])
	warned := warn with input as inp
	some f in warned
	f.rule == "SW-WAIVER-002"
	f.path == "waivers[0]"
	f.evidence.change == "extended"
	f.evidence.base_expires == ["2027-12-31"]
	contains(f.message, "extended by this pull request (expires 2028-01-01; the base (origin/main): 2027-12-31)")
}

test_waiver002_extended_past_every_base_waiver_of_the_rule if {
	a := object.union(_tw_ret, {"expires": "2027-06-30", "expires_end_ms": 1814400000000})
	mid := object.union(_tw_ret, {"expires": "2027-09-30", "expires_end_ms": 1822348800000})
	inp := _tw_in([a, _tw_ret], [mid])
	warned := warn with input as inp
	count(_tw_002(warned)) == 0
	inp2 := _tw_in([a, mid], [_tw_ret])
	warned2 := warn with input as inp2
	lib.rule_paths(warned2, "SW-WAIVER-002") == {"waivers[0]"}
}

test_waiver002_renewed_after_a_base_waiver_without_expiry if {
	inp := _tw_in([{"rule": "SW-RET-002", "reason": "x"}], [_tw_ret])
	warned := warn with input as inp
	some f in warned
	f.evidence.change == "extended"
	contains(f.message, "the base (origin/main): no expires")
}

test_waiver002_head_without_valid_expiry_is_not_extended if {
	inp := _tw_in([_tw_ret], [{"rule": "SW-RET-002", "reason": "x", "expires": "2099-01-01"}])
	warned := warn with input as inp
	count(warned) == 0
}

test_waiver002_each_head_waiver_on_its_own if {
	later := object.union(_tw_ret, {"expires": "2028-01-01", "expires_end_ms": 1830384000000})
	inp := _tw_in([_tw_ret], [_tw_ret, later, "junk"])
	warned := warn with input as inp
	lib.rule_paths(warned, "SW-WAIVER-002") == {"waivers[1]"}
}

test_waiver002_head_waivers_not_a_list if {
	inp := _tw_in([_tw_ret], "junk")
	warned := warn with input as inp
	count(warned) == 0
}
