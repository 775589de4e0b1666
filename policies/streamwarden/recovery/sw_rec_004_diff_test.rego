package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

_tr_job_id := "0123456789abcdef0123456789abcdef"

_tr_fill := {
	"job": "orders-backfill",
	"job_id": _tr_job_id,
	"branch": "backfill-2025-03",
	"from": "2025-03-01T00:00:00Z",
	"to": "2025-03-31T00:00:00Z",
	"reason": "replay March",
}

_tr_in(base_fills, head_fills) := {
	"contract": {"backfills": head_fills},
	"base": lib.base_doc({"backfills": base_fills}),
}

# head = _tr_fill with `patch` merged in and the keys in `drop` removed.
_tr_head(patch, drop) := json.remove(object.union(_tr_fill, patch), drop)

_tr_004(findings) := {f | some f in findings; f.rule == "SW-REC-004"}

# ---------------------------------------------------------------- silent cases

test_recdiff_unchanged_example_passes if {
	c := object.union(lib.example_contract, {"backfills": [_tr_fill]})
	inp := {"contract": c, "base": lib.base_doc(c)}
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_recdiff_silent_without_base if {
	head := {"backfills": [_tr_head({"to": "2026-01-01T00:00:00Z"}, ["branch"])]}
	every base in [
		null,
		{"status": "added", "contract": null},
		{"status": "unparseable", "error": "bad", "contract": null},
		object.union(lib.base_doc({"backfills": [_tr_fill]}), {"status": "added"}),
	] {
		inp := {"contract": head, "base": base}
		denied := deny with input as inp
		count(_tr_004(denied)) == 0
	}
}

test_recdiff_base_without_status_is_compared if {
	inp := {"contract": {"backfills": [_tr_head({}, ["branch"])]}, "base": {"contract": {"backfills": [_tr_fill]}}}
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-REC-004"
	contains(f.message, "in the base)")
}

test_recdiff_narrowed_passes if {
	head := _tr_head({"from": "2025-03-10T00:00:00Z", "to": "2025-03-20T00:00:00+02:00"}, [])
	inp := _tr_in([_tr_fill], [head])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_recdiff_same_instant_other_spelling_passes if {
	head := _tr_head({"from": "2025-03-01 01:00:00+01:00", "to": "2025-03-31t00:00:00.000z"}, [])
	inp := _tr_in([_tr_fill], [head])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_recdiff_new_backfill_is_left_to_the_contract_side if {
	other := object.union(_tr_fill, {"job": "other-backfill", "job_id": "ffffffffffffffffffffffffffffffff"})
	inp := _tr_in([_tr_fill], [_tr_fill, other])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_recdiff_bound_added_passes if {
	base := json.remove(_tr_fill, ["from", "to"])
	inp := _tr_in([base], [_tr_fill])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_recdiff_unbounded_head_is_reported_by_the_contract_side_only if {
	head := _tr_head({}, ["branch", "from"])
	inp := _tr_in([_tr_fill], [head])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].branch"}
	some f in denied
	f.rule == "SW-REC-004"
	contains(f.message, "has no boundary")
}

# ---------------------------------------------------------------- SW-REC-004 (diff side)

test_rec004_branch_removed if {
	inp := _tr_in([_tr_fill], [_tr_head({}, ["branch"])])
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-REC-004"
	f.path == "backfills[0].branch"
	f.value == null
	f.evidence == {"job": "orders-backfill", "job_id": _tr_job_id, "field": "branch", "change": "removed", "base": "backfill-2025-03", "head": null}
	contains(f.message, "branch is removed (it was backfill-2025-03 in the base (origin/main))")
	contains(f.message, "reviewers must re-approve the widened boundary")
	count(_tr_004(denied)) == 1
}

test_rec004_branch_blanked if {
	inp := _tr_in([_tr_fill], [_tr_head({"branch": " "}, [])])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].branch"}
}

test_rec004_branch_changed if {
	inp := _tr_in([_tr_fill], [_tr_head({"branch": "main"}, [])])
	denied := deny with input as inp
	some f in denied
	f.evidence.change == "changed"
	f.value == "main"
}

test_rec004_from_moved_earlier if {
	inp := _tr_in([_tr_fill], [_tr_head({"from": "2025-02-28T23:59:59.5Z"}, [])])
	denied := deny with input as inp
	some f in denied
	f.rule == "SW-REC-004"
	f.path == "backfills[0].from"
	f.evidence.change == "earlier"
	contains(f.message, "from moves earlier, from 2025-03-01T00:00:00Z in the base (origin/main) to 2025-02-28T23:59:59.5Z")
}

test_rec004_from_earlier_through_offset if {
	# 2025-03-01T00:30:00+01:00 is 2025-02-28T23:30:00Z: earlier, though the text sorts later.
	inp := _tr_in([_tr_fill], [_tr_head({"from": "2025-03-01T00:30:00+01:00"}, [])])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].from"}
}

test_rec004_to_moved_later if {
	inp := _tr_in([_tr_fill], [_tr_head({"to": "2025-04-30T00:00:00Z"}, [])])
	denied := deny with input as inp
	some f in denied
	f.path == "backfills[0].to"
	f.evidence.change == "later"
}

test_rec004_to_removed if {
	inp := _tr_in([_tr_fill], [_tr_head({}, ["to"])])
	denied := deny with input as inp
	some f in denied
	f.path == "backfills[0].to"
	f.evidence.change == "removed"
}

test_rec004_from_removed if {
	inp := _tr_in([_tr_fill], [_tr_head({}, ["from"])])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].from"}
}

test_rec004_one_finding_per_widening if {
	head := _tr_head({"branch": "other", "from": "2024-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, [])
	inp := _tr_in([_tr_fill], [head])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].branch", "backfills[0].from", "backfills[0].to"}
}

test_rec004_unreadable_times_that_differ if {
	# Feb 30th, a leap second, and a year outside the nanosecond range cannot be compared.
	every t in ["2025-02-30T00:00:00Z", "2025-03-31T23:59:60Z", "2300-01-01T00:00:00Z", "yesterday", "2025-03-31T24:00:00Z", "2025-03-31T00:00:00+24:00"] {
		inp := _tr_in([_tr_fill], [_tr_head({"to": t}, [])])
		denied := deny with input as inp
		some f in denied
		f.path == "backfills[0].to"
		f.evidence.change == "changed"
		contains(f.message, "to changes from 2025-03-31T00:00:00Z in the base (origin/main) to")
	}
}

test_rec004_unreadable_same_text_passes if {
	odd := object.union(_tr_fill, {"to": "2025-02-30T00:00:00Z"})
	inp := _tr_in([odd], [odd])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_rec004_leap_days if {
	base := object.union(_tr_fill, {"from": "2024-03-01T00:00:00Z"})
	inp := _tr_in([base], [object.union(base, {"from": "2024-02-29T00:00:00Z"})])
	denied := deny with input as inp
	some f in denied
	f.evidence.change == "earlier"
	base2 := object.union(_tr_fill, {"from": "2000-03-01T00:00:00Z"})
	inp2 := _tr_in([base2], [object.union(base2, {"from": "2000-02-29T00:00:00Z"})])
	denied2 := deny with input as inp2
	some f2 in denied2
	f2.evidence.change == "earlier"
	base3 := object.union(_tr_fill, {"from": "1900-03-01T00:00:00Z"})
	inp3 := _tr_in([base3], [object.union(base3, {"from": "1900-02-29T00:00:00Z"})])
	denied3 := deny with input as inp3
	some f3 in denied3
	f3.evidence.change == "changed"
}

test_rec004_matched_by_job_when_job_id_added if {
	base := json.remove(_tr_fill, ["job_id"])
	inp := _tr_in([base], [_tr_head({}, ["branch"])])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].branch"}
}

test_rec004_other_job_id_is_another_backfill if {
	head := _tr_head({"job_id": "ffffffffffffffffffffffffffffffff"}, ["branch"])
	inp := _tr_in([_tr_fill], [head])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}

test_rec004_duplicate_base_entries_first_wins if {
	wide := object.union(_tr_fill, {"to": "2025-12-31T00:00:00Z"})
	inp := _tr_in([_tr_fill, wide, "junk"], [wide])
	denied := deny with input as inp
	lib.rule_paths(denied, "SW-REC-004") == {"backfills[0].to"}
}

test_rec004_backfills_not_a_list if {
	inp := _tr_in("junk", [_tr_fill])
	denied := deny with input as inp
	count(_tr_004(denied)) == 0
}
