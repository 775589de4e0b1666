# Recovery and governance (SW-REC): what the pull request does to the promises the contract
# makes to the table's consumers, the base branch's contract against the pull request's.
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

# METADATA
# title: A promise to consumers must not be weakened without review
# description: |
#   Consumers plan around what the contract promises them: a sink's delivery guarantee, how far
#   back the pipeline can be rolled back, the lineage every snapshot carries, how fresh the data
#   is, how long snapshots, savepoints, checkpoints and rows are kept. A pull request that weakens
#   one is a change to coordinate with them, never a safe one. Fires once per promise weakened,
#   naming the consumers the base declares: a sink (paired by name) whose delivery was
#   exactly_once and no longer is; table.commit.lineage no longer required; a consumer's
#   freshness (paired by name) or quality.freshness.max_lag raised or dropped;
#   retention.rollback_window, snapshots.max_age and min_keep, checkpoints.num_retained,
#   savepoints.max_age and min_keep lowered or dropped; retention.data.max_age lowered (rows go
#   sooner). A promise made stronger, or a sink or consumer added or removed, is not this rule's.
# custom:
#   id: SW-REC-008
#   kind: diff
#   severity: warning
#   remediation: |
#     Tell the consumers named and agree the new promise with them before merging; if the old
#     promise still holds, keep it in the contract.
#   example: |
#     # base: job.sinks: [{name: orders-table, delivery: exactly_once, ...}], retention: {rollback_window: 3d}
#     job:
#       sinks: [{name: orders-table, delivery: at_least_once, ...}]
#     retention:
#       rollback_window: 1h
warn contains f if {
	base := lib.diff_base(input)
	# promises of at least this much (a duration in ms, or a count): weakened when head's is
	# lower, or (where "gone" is true) when head no longer makes it
	some floor in [
		{"field": "retention.rollback_window", "what": "the rollback window", "ms": true, "gone": true},
		{"field": "retention.snapshots.max_age", "what": "how long table snapshots are kept", "ms": true, "gone": true},
		{"field": "retention.snapshots.min_keep", "what": "how many table snapshots are kept", "ms": false, "gone": true},
		{"field": "retention.checkpoints.num_retained", "what": "how many checkpoints are retained", "ms": false, "gone": true},
		{"field": "retention.savepoints.max_age", "what": "how old a savepoint may be and still be restored", "ms": true, "gone": true},
		{"field": "retention.savepoints.min_keep", "what": "how many savepoints are kept", "ms": false, "gone": true},
		# rows older than this are deleted: a shorter age takes history from consumers (none keeps every row)
		{"field": "retention.data.max_age", "what": "how long rows are kept", "ms": true, "gone": false},
	]
	path := split(floor.field, ".")
	old := object.get(base, path, null)
	is_number(old)
	new := object.get(_promise_head, path, null)
	_promise_lower(old, new, floor.gone)
	f := _promise_finding(
		"SW-REC-008", floor.field, floor.what, old, new,
		_promise_text(old, floor.ms), _promise_text(new, floor.ms), _promise_consumers,
	)
}

_promise_head := lib.diff_head(input.contract)

# The consumers the base promised things to.
_promise_consumers := names if {
	names := lib.consumer_names(lib.diff_base(input))
} else := []

_promise_lower(old, new, _) if {
	is_number(new)
	new < old
}

_promise_lower(_, new, gone) if {
	not is_number(new)
	gone
}

# A promise of at most this much (a lag): weakened when head's is higher or gone.
_promise_higher(old, new) if {
	is_number(new)
	new > old
}

_promise_higher(_, new) if not is_number(new)

# A promise as the contract writes it (a duration as 3d, not in ms).
_promise_text(x, ms) := "not set" if {
	x == null
} else := lib.fmt_ms(x) if {
	is_number(x)
	ms
} else := sprintf("%v", [x])

_promise_tell(names) := sprintf("tell %s before merging", [concat(", ", names)]) if {
	count(names) > 0
} else := "no consumer is declared, but a reader may rely on it"

# One finding of `rule`: `what` weakened from `old` to `new` at `path`, `names` the consumers to tell.
_promise_finding(rule, path, what, old, new, old_text, new_text, names) := {
	"rule": rule,
	"message": sprintf(
		"%s is weakened from %s in %s to %s: a promise consumers rely on; %s",
		[what, old_text, lib.diff_base_name(input), new_text, _promise_tell(names)],
	),
	"path": path,
	"value": new,
	"evidence": {"field": path, "base": old, "head": new, "consumers": names},
}

# SW-REC-008: quality.freshness.max_lag raised or dropped (the newest row may lag more).
warn contains f if {
	old := object.get(lib.diff_base(input), ["quality", "freshness", "max_lag"], null)
	is_number(old)
	new := object.get(_promise_head, ["quality", "freshness", "max_lag"], null)
	_promise_higher(old, new)
	f := _promise_finding(
		"SW-REC-008", "quality.freshness.max_lag", "how far the newest row may lag", old, new,
		lib.fmt_ms(old), _promise_text(new, true), _promise_consumers,
	)
}

# SW-REC-008: a consumer's freshness raised or dropped (told to that consumer).
warn contains f if {
	base := lib.diff_base(input)
	some idx, consumer in lib.list_at(_promise_head, ["metadata", "consumers"])
	is_object(consumer)
	name := object.get(consumer, "name", null)
	is_string(name)
	some was in lib.list_at(base, ["metadata", "consumers"])
	is_object(was)
	object.get(was, "name", null) == name
	old := object.get(was, "freshness", null)
	is_number(old)
	new := object.get(consumer, "freshness", null)
	_promise_higher(old, new)
	f := _promise_finding(
		"SW-REC-008", sprintf("metadata.consumers[%d].freshness", [idx]), sprintf("the freshness promised to %s", [lib.quote(name)]),
		old, new, lib.fmt_ms(old), _promise_text(new, true), [name],
	)
}

# SW-REC-008: a sink's delivery no longer exactly-once.
warn contains f if {
	base := lib.diff_base(input)
	some idx, sink in lib.list_at(_promise_head, ["job", "sinks"])
	is_object(sink)
	name := object.get(sink, "name", null)
	is_string(name)
	some was in lib.list_at(base, ["job", "sinks"])
	is_object(was)
	object.get(was, "name", null) == name
	object.get(was, "delivery", null) == "exactly_once"
	new := object.get(sink, "delivery", null)
	new != "exactly_once"
	f := _promise_finding(
		"SW-REC-008", sprintf("job.sinks[%d].delivery", [idx]), sprintf("the delivery guarantee of sink %s", [lib.quote(name)]),
		"exactly_once", new, "exactly_once", _promise_text(new, false), _promise_consumers,
	)
}

# SW-REC-008: snapshots no longer required to carry Flink lineage.
warn contains f if {
	object.get(lib.diff_base(input), ["table", "commit", "lineage"], null) == "required"
	new := object.get(_promise_head, ["table", "commit", "lineage"], null)
	new != "required"
	f := _promise_finding(
		"SW-REC-008", "table.commit.lineage", "the lineage every snapshot carries (flink.job-id, operator id, checkpoint id)",
		"required", new, "required", _promise_text(new, false), _promise_consumers,
	)
}
