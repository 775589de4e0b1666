# Recovery and governance (SW-REC): the diff side of SW-REC-004, the base branch's backfills
# against the pull request's.
#
# Silent unless input.base is an object whose status is "present" (or absent) and whose
# contract is an object: no --base, a contract added by the pull request (status "added") and
# an unparseable base say nothing here.
package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

_diff_backfills(c) := bs if {
	bs := object.get(c, "backfills", [])
	is_array(bs)
} else := []

_diff_key(b) := [object.get(b, "job", null), object.get(b, "job_id", null)]

# Base backfills by [job, job_id], and by job alone (first occurrence wins).
_diff_base_by_key := {k: bs[i] |
	bs := _diff_backfills(lib.diff_base(input))
	some k, i in lib.first_index([[_diff_key(b), j] | some j, b in bs; is_object(b)])
}

_diff_base_by_job := {job: bs[i] |
	bs := _diff_backfills(lib.diff_base(input))
	some job, i in lib.first_index([[job, j] | some j, b in bs; is_object(b); job := object.get(b, "job", null); is_string(job)])
}

# The base backfill a head backfill continues: same job and job_id; else the same job when
# either side has no job_id (a job_id added or removed by the pull request).
_diff_base_match(b) := bb if {
	bb := _diff_base_by_key[_diff_key(b)]
} else := bb if {
	bb := _diff_base_by_job[object.get(b, "job", null)]
	null in {object.get(b, "job_id", null), object.get(bb, "job_id", null)}
}

# ---------------------------------------------------------------- RFC 3339 times

# A from/to value in epoch nanoseconds. The schema lets `t`/`z` and a space separator through;
# they are normalized first. Values time.parse_rfc3339_ns could reject (calendar errors, leap
# seconds, years outside 1678..2261 where nanoseconds overflow) stay undefined here, so no
# engine raises an error.
_diff_ts_ns(s) := ns if {
	is_string(s)
	t := replace(upper(trim_space(s)), " ", "T")
	m := regex.find_all_string_submatch_n(
		`^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(Z|[+-]([0-9]{2}):([0-9]{2}))$`,
		t, 1,
	)[0]
	year := lib.digits_value(m[1])
	month := lib.digits_value(m[2])
	day := lib.digits_value(m[3])
	year >= 1678
	year <= 2261
	month >= 1
	month <= 12
	day >= 1
	day <= _diff_month_days(year, month)
	lib.digits_value(m[4]) <= 23
	lib.digits_value(m[5]) <= 59
	lib.digits_value(m[6]) <= 59
	lib.digits_value(m[9]) <= 23
	lib.digits_value(m[10]) <= 59
	ns := time.parse_rfc3339_ns(t)
}

_diff_leap(y) if {
	y % 4 == 0
	y % 100 != 0
}

_diff_leap(y) if y % 400 == 0

_diff_month_days(y, m) := 29 if {
	m == 2
	_diff_leap(y)
} else := [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]

# ---------------------------------------------------------------- widened boundaries

_diff_set(b, key) := v if {
	v := object.get(b, key, null)
	not lib.blank(v)
}

# [change] when head's branch widens the base's: removed, or another branch (a new target the
# reviewers have not approved); else [].
_diff_branch_widening(b, bb) := [{"field": "branch", "change": "removed", "base": old, "head": null}] if {
	old := _diff_set(bb, "branch")
	not _diff_set(b, "branch")
} else := [{"field": "branch", "change": "changed", "base": old, "head": new}] if {
	old := _diff_set(bb, "branch")
	new := _diff_set(b, "branch")
	old != new
} else := []

# [change] when head's `from` (direction "earlier") or `to` (direction "later") widens the
# base's: removed, moved in that direction, or changed where either value cannot be read as
# a time (it cannot be shown to stay within the approved range); else [].
_diff_time_widening(b, bb, key, direction) := [{"field": key, "change": "removed", "base": old, "head": null}] if {
	old := _diff_set(bb, key)
	not _diff_set(b, key)
} else := [{"field": key, "change": direction, "base": old, "head": new}] if {
	old := _diff_set(bb, key)
	new := _diff_set(b, key)
	_diff_moved(_diff_ts_ns(new), _diff_ts_ns(old), direction)
} else := [{"field": key, "change": "changed", "base": old, "head": new}] if {
	old := _diff_set(bb, key)
	new := _diff_set(b, key)
	not _diff_both_times(old, new)
	replace(upper(trim_space(old)), " ", "T") != replace(upper(trim_space(new)), " ", "T")
} else := []

_diff_moved(new, old, "earlier") if new < old

_diff_moved(new, old, "later") if new > old

_diff_both_times(a, b) if {
	_diff_ts_ns(a)
	_diff_ts_ns(b)
}

_diff_widenings(b, bb) := array.concat(
	_diff_branch_widening(b, bb),
	array.concat(_diff_time_widening(b, bb, "from", "earlier"), _diff_time_widening(b, bb, "to", "later")),
)

_diff_change_text(w) := sprintf("%s is removed (it was %v in %s)", [w.field, w.base, lib.diff_base_name(input)]) if {
	w.change == "removed"
} else := sprintf("%s moves %s, from %v in %s to %v", [w.field, w.change, w.base, lib.diff_base_name(input), w.head]) if {
	w.change in {"earlier", "later"}
} else := sprintf("%s changes from %v in %s to %v", [w.field, w.base, lib.diff_base_name(input), w.head])

# SW-REC-004 (diff side; METADATA above): a declared backfill whose boundary the
# pull request widened. A head backfill without any boundary is left to the contract side.
deny contains f if {
	lib.diff_base(input)
	some idx, b in _diff_backfills(input.contract)
	is_object(b)
	_bounded(b)
	bb := _diff_base_match(b)
	some w in _diff_widenings(b, bb)
	f := {
		"rule": "SW-REC-004",
		"message": sprintf(
			"backfill %s (backfills[%d]) widens its approved boundary: %s; reviewers must re-approve the widened boundary, since the backfill writes the same table as the pipeline",
			[lib.quote(object.get(b, "job", null)), idx, _diff_change_text(w)],
		),
		"path": sprintf("backfills[%d].%s", [idx, w.field]),
		"value": w.head,
		"evidence": {
			"job": object.get(b, "job", null),
			"job_id": object.get(b, "job_id", null),
			"field": w.field,
			"change": w.change,
			"base": w.base,
			"head": w.head,
		},
	}
}
