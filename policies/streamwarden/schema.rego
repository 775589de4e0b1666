# Schema evolution (SW-SCHEMA): the diff side, the base branch's contract (input.base.contract)
# against the pull request's (input.contract). SW-SCHEMA-008 (live table vs contract) lives in
# another file of this package.
#
# Every rule here is silent unless input.base is an object whose status is "present" (or
# absent) and whose contract is an object: no --base, a contract added by the pull request
# (status "added") and an unparseable base say nothing here.
#
# The schema_evolution section in force is the BASE's (see SW-SCHEMA-009's METADATA). Normalization
# fills in the contract schema's defaults, so the section and its keys are always there; a document
# built by hand may lack them, and each absent (or invalid) one means the same default:
# compatibility backward, allow_renames false, coordinate_with_state false, protect_consumers true.
#
# Field pairing, base (or an earlier version) <-> head, in this order:
#   1. by id: both fields carry an id and the ids are equal (two fields that both carry ids pair
#      by id only, whatever their names);
#   2. by renamed_from: the head field's renamed_from names the old field;
#   3. by name.
# An old field is claimed once: a head field already claimed by id, or by its renamed_from, is
# not paired again by name. Where a head list repeats an id, name or renamed_from, the first
# occurrence wins. A pair with different names is a rename; an old field without a pair was
# removed; a head field without a pair was added.
#
# The table schema is compared only when base and head both declare table.schema as a list and
# do not name different tables (table.identifier changed: another table, nothing to evolve).
# Earlier versions (input.base.history, newest first) take part only under a transitive mode,
# and only those that declare table.schema for the same table.
#
# Cost: every old field finds its head pair through lookups in objects keyed by id, name and
# renamed_from, and each distinct earlier schema is paired once, so a transitive check costs at
# most fields x distinct versions (200 versions of 31 fields, all distinct: ~0.6 s CPU on
# regorus and on OPA; with ~30 distinct schemas: ~0.15 s), never fields^2 x versions.
package streamwarden.schema

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [base]

# ---------------------------------------------------------------- inputs

_evo_base_doc := b if {
	b := object.get(input, "base", null)
	is_object(b)
}

_evo_base := c if {
	b := _evo_base_doc
	object.get(b, "status", "present") == "present"
	c := object.get(b, "contract", null)
	is_object(c)
}

_evo_head := c if {
	c := object.get(input, "contract", null)
	is_object(c)
}

# Where the base came from, for messages and evidence.
_evo_base_ref := object.get(_evo_base_doc, "ref", null)

_evo_base_commit := object.get(_evo_base_doc, "commit", null)

_evo_base_name := sprintf("the base (%s)", [_evo_base_ref]) if {
	is_string(_evo_base_ref)
} else := "the base"

_evo_fields(c) := fs if {
	fs := object.get(c, ["table", "schema"], null)
	is_array(fs)
}

_evo_identifier(c) := i if {
	i := object.get(c, ["table", "identifier"], null)
	is_string(i)
}

# c names another table than the head does.
_evo_other_table(c) if _evo_identifier(c) != _evo_identifier(_evo_head)

_evo_head_fields := _evo_fields(_evo_head)

_evo_base_fields := _evo_fields(_evo_base)

# The table schema can be compared at all.
_evo_active if {
	_evo_head_fields
	_evo_base_fields
	not _evo_other_table(_evo_base)
}

# ---------------------------------------------------------------- the section in force (base)

_evo_base_section := s if {
	s := object.get(_evo_base, "schema_evolution", {})
	is_object(s)
} else := {}

_evo_head_section := s if {
	s := object.get(_evo_head, "schema_evolution", {})
	is_object(s)
} else := {}

_evo_mode_of(section) := m if {
	m := object.get(section, "compatibility", "backward")
	is_string(m)
} else := "backward"

_evo_mode := _evo_mode_of(_evo_base_section)

_evo_forward_modes := {"forward", "full", "forward_transitive", "full_transitive"}

_evo_transitive_modes := {"backward_transitive", "forward_transitive", "full_transitive"}

_evo_allow_renames if object.get(_evo_base_section, "allow_renames", false) == true

_evo_coordinate if object.get(_evo_base_section, "coordinate_with_state", false) == true

# protect_consumers of a section: true unless it says false.
_evo_protecting(section) if object.get(section, "protect_consumers", true) != false

# ---------------------------------------------------------------- field accessors

_evo_name(f) := n if {
	is_object(f)
	n := object.get(f, "name", null)
	is_string(n)
}

_evo_id(f) := i if {
	is_object(f)
	i := object.get(f, "id", null)
	is_number(i)
}

# renamed_from, when it names another field than the field itself.
_evo_rf(f) := r if {
	is_object(f)
	r := object.get(f, "renamed_from", null)
	is_string(r)
	r != object.get(f, "name", null)
}

_evo_type(f) := object.get(f, "type", null)

# true or false (never undefined), so two fields' required-ness compare with `!=`.
_evo_required(f) := object.get(f, "required", false) == true if is_object(f)

# ---------------------------------------------------------------- head lookups (first occurrence wins)

# (Complete rules, evaluated once: every old field of every compared version looks them up; one
# sort each, see lib.first_index.)
# (_evo_id and _evo_name written out in the comprehensions over every field: a function call per
# field is most of their cost on a wide schema)
_evo_head_by_id := lib.first_index([[k, idx] |
	some idx, f in _evo_head_fields
	is_object(f)
	k := object.get(f, "id", null)
	is_number(k)
])

_evo_head_by_name := lib.first_index([[k, idx] |
	some idx, f in _evo_head_fields
	is_object(f)
	k := object.get(f, "name", null)
	is_string(k)
])

_evo_head_by_rf := lib.first_index([[k, idx] |
	some idx, f in _evo_head_fields
	is_object(f)
	k := object.get(f, "renamed_from", null)
	is_string(k)
	k != object.get(f, "name", null)
])

# ---------------------------------------------------------------- pairing

# A version of the schema with the sets its pairing needs.
_evo_ctx(fields) := {
	"fields": fields,
	"ids": {i | some f in fields; is_object(f); i := object.get(f, "id", null); is_number(i)},
	"names": {n | some f in fields; is_object(f); n := object.get(f, "name", null); is_string(n)},
}

_evo_both_ids(h, o) if {
	_evo_id(h)
	_evo_id(o)
}

# Head field h may pair with old field o by renamed_from or by name: not both carry ids, and
# no old field of the version claims h by its id.
_evo_free(h, o, ctx) if {
	not _evo_both_ids(h, o)
	not _evo_id_claimed(h, ctx)
}

# (A helper rule: OPA hoists a function call out of `not f(x) in s`, so an undefined f(x)
# would make the negation undefined instead of true.)
_evo_id_claimed(h, ctx) if _evo_id(h) in ctx.ids

# h was renamed from a field that the version still has: that field claims h.
_evo_rf_claimed(h, ctx) if _evo_rf(h) in ctx.names

# _evo_pair(o, ctx): the index in the head schema of old field o's pair; undefined when o was
# removed.
_evo_pair(o, ctx) := idx if {
	idx := _evo_head_by_id[_evo_id(o)]
} else := idx if {
	idx := _evo_head_by_rf[_evo_name(o)]
	_evo_free(_evo_head_fields[idx], o, ctx)
} else := idx if {
	idx := _evo_head_by_name[_evo_name(o)]
	h := _evo_head_fields[idx]
	_evo_free(h, o, ctx)
	not _evo_rf_claimed(h, ctx)
}

_evo_base_ctx := _evo_ctx(_evo_base_fields)

# Base <-> head pairs.
_evo_pairs contains {"base": bi, "head": hi} if {
	_evo_active
	some bi, o in _evo_base_fields
	hi := _evo_pair(o, _evo_base_ctx)
}

_evo_paired_head contains p.head if some p in _evo_pairs

_evo_paired_base contains p.base if some p in _evo_pairs

# The head and base fields no pair holds (added, removed): a set difference of indexes instead of
# a test per field of a wide schema.
_evo_unpaired_heads := _evo_indexes(_evo_head_fields) - _evo_paired_head

_evo_unpaired_bases := _evo_indexes(_evo_base_fields) - _evo_paired_base

_evo_indexes(fields) := {i | some i in numbers.range(0, count(fields) - 1)} if {
	count(fields) > 0
} else := set()

# The pairs whose two fields differ: the rules that compare a pair's fields (type, required, name)
# can only fire on these (most pairs of a wide schema are the same field, unchanged).
_evo_changed_pairs := [p |
	some p in _evo_pairs
	_evo_base_fields[p.base] != _evo_head_fields[p.head]
]

# How a pair was made, for messages.
_evo_paired_by(h, o) := "id" if {
	_evo_id(h) == _evo_id(o)
} else := "renamed_from"

# ---------------------------------------------------------------- versions compared (SW-SCHEMA-001, 010)

_evo_history_raw := h if {
	h := object.get(_evo_base_doc, "history", [])
	is_array(h)
} else := []

_evo_transitive if _evo_mode in _evo_transitive_modes

# Earlier versions that declare a schema for the same table, newest first: [commit, fields].
_evo_history := [[commit, fields] |
	some e in _evo_history_raw
	is_object(e)
	c := object.get(e, "contract", null)
	is_object(c)
	fields := _evo_fields(c)
	not _evo_other_table(c)
	commit := object.get(e, "commit", null)
]

# The distinct earlier schemas, under a transitive mode only. Most commits leave the schema
# alone, so each distinct schema is paired with head once, however long the history.
_evo_history_schemas contains fields if {
	_evo_transitive
	some [_, fields] in _evo_history
}

_evo_version_label(commit) := sprintf("the earlier version %s", [substring(commit, 0, 12)]) if {
	is_string(commit)
} else := "an earlier version"

# ---------------------------------------------------------------- Iceberg type promotions

_evo_format_version := v if {
	v := object.get(_evo_head, ["table", "format_version"], null)
	is_number(v)
} else := 0

# A decimal literal's digits as a number (to_number refuses leading zeros).
_evo_digits(s) := 0 if {
	trim_left(s, "0") == ""
} else := to_number(trim_left(s, "0"))

# decimal(P,S) -> [P, S]
_evo_decimal(t) := [_evo_digits(m[1]), _evo_digits(m[2])] if {
	is_string(t)
	m := regex.find_all_string_submatch_n(`^decimal\(([0-9]+),([0-9]+)\)$`, t, 1)[0]
}

_evo_date_to_ts(old, new) if {
	old == "date"
	new in {"timestamp", "timestamp_ns"}
}

# _evo_promotion(old, new): Iceberg can change the column type from old to new without a
# rewrite.
_evo_promotion(old, new) if {
	old == "int"
	new == "long"
}

_evo_promotion(old, new) if {
	old == "float"
	new == "double"
}

_evo_promotion(old, new) if {
	[p1, s1] := _evo_decimal(old)
	[p2, s2] := _evo_decimal(new)
	s1 == s2
	p2 > p1
	p2 <= 38 # Iceberg's decimal precision is at most 38
}

_evo_promotion(old, new) if {
	_evo_date_to_ts(old, new)
	_evo_format_version >= 3
}

# Format v3: a column of type unknown (only nulls so far) may take any type, nested ones too.
_evo_promotion("unknown", new) if {
	new != "unknown"
	_evo_format_version >= 3
}

# Base <-> head type changes: [head index, base index, old type, new type].
_evo_type_changes contains [p.head, p.base, old, new] if {
	some p in _evo_changed_pairs
	old := _evo_type(_evo_base_fields[p.base])
	new := _evo_type(_evo_head_fields[p.head])
	old != new
}

# Head fields whose base -> head type change Iceberg refuses (SW-SCHEMA-002).
_evo_refused_types contains hi if {
	some [hi, _, old, new] in _evo_type_changes
	not _evo_promotion(old, new)
}

# ---------------------------------------------------------------- SW-SCHEMA-001

# Names of the required fields of a schema version with no pair in head.
_evo_removed(fields) := _evo_removed_with(fields, _evo_ctx(fields))

# (the base's context is a rule, computed once: the pairing reads it too)
_evo_removed_with(fields, ctx) := removed if {
	removed := {n |
		some o in fields
		is_object(o) # _evo_required(o), written out: it is asked of every field
		object.get(o, "required", false) == true
		not _evo_pair(o, ctx)
		n := _evo_name(o)
	}
}

_evo_removed_base := _evo_removed_with(_evo_base_fields, _evo_base_ctx)

_evo_removed_in[fields] := _evo_removed(fields) if some fields in _evo_history_schemas

_evo_removed_required_names contains n if some n in _evo_removed_base

_evo_removed_required_names contains n if {
	some removed in _evo_removed_in
	some n in removed
}

# [label, commit] of the compared versions in which field n is required and has no pair in
# head, newest first.
_evo_required_in(n) := array.concat(
	[[_evo_base_name, _evo_base_commit] | n in _evo_removed_base],
	[[_evo_version_label(c), c] | some [c, fields] in _evo_history; n in _evo_removed_in[fields]],
)

# METADATA
# title: Fields old readers need must not be removed
# description: |
#   Under compatibility forward or full (readers still on the old schema read data written
#   with the new one), a reader that expects a required field breaks when the field is gone.
#   Fires for each field that is required in the base contract and has no pair in the head
#   contract (paired by id, renamed_from or name; a rename is not a removal). Under
#   forward_transitive and full_transitive every earlier version of the contract along the
#   first-parent history counts too: a field required in any earlier version and absent from
#   head fires, even if a later version already made it optional or dropped it. Optional
#   fields may go; under backward (and none) any field may go, unless the table has consumers
#   (SW-SCHEMA-012 then protects every column). The mode in force is the base's
#   schema_evolution.compatibility (absent means backward). One finding per field name,
#   pointing at table.schema with the removed name as value.
# custom:
#   id: SW-SCHEMA-001
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the field. To retire it, make it optional (required: false) in one release and
#     remove it in a later one, once no reader relies on it; under a transitive mode a field
#     that was ever required cannot go without a reviewed change of the compatibility mode.
#   example: |
#     # base: schema_evolution: {compatibility: forward}
#     #       table.schema: [{name: order_id, type: long, required: true}, {name: customer_id, type: long, required: true}]
#     table:
#       schema: [{name: order_id, type: long, required: true}]   # customer_id removed
deny contains f if {
	_evo_active
	_evo_mode in _evo_forward_modes
	some name in _evo_removed_required_names
	seen := _evo_required_in(name)
	[label, commit] := seen[0]
	f := {
		"rule": "SW-SCHEMA-001",
		"message": sprintf(
			"field %s was removed, but it is required in %s and schema_evolution.compatibility is %s: readers still on the old schema need it; keep the field, or make it optional first and remove it in a later release",
			[lib.quote(name), label, _evo_mode],
		),
		"path": "table.schema",
		"value": name,
		"evidence": {
			"field": name,
			"compatibility": _evo_mode,
			"required_in": label,
			"commit": commit,
			"versions_required": count(seen),
			"base_ref": _evo_base_ref,
		},
	}
}

# ---------------------------------------------------------------- SW-SCHEMA-002

# METADATA
# title: Column types may only change by an Iceberg promotion
# description: |
#   Iceberg changes a column's type in place only by a promotion: int to long, float to
#   double, decimal(P,S) to decimal(P',S) with P' > P (same scale; a scale change is not a
#   promotion; P' at most 38), and, on format version 3 (the head's table.format_version), unknown
#   to any type and date to timestamp
#   or timestamp_ns (not to the tz types). Anything else (long to int, string to binary,
#   decimal scale changes, any change inside a struct, list or map type) is refused: the table
#   cannot evolve that way without a rewrite. Fires for each field paired between base and
#   head (by id, renamed_from or name) whose type changed other than by a promotion, under
#   every compatibility mode, none included. A non-promotion is reported here alone, never as
#   SW-SCHEMA-010 too.
# custom:
#   id: SW-SCHEMA-002
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the old type, or add a new column with the new type (and backfill it) instead of
#     changing this one. Nested types must stay exactly as they are.
#   example: |
#     # base: {name: amount, type: "decimal(12,2)"}
#     table:
#       schema: [{name: amount, type: "decimal(12,4)"}]   # scale change
deny contains f if {
	some [hi, bi, old, new] in _evo_type_changes
	not _evo_promotion(old, new)
	name := _evo_name(_evo_head_fields[hi])
	f := {
		"rule": "SW-SCHEMA-002",
		"message": sprintf(
			"field %s changed type from %v to %v, which is not an Iceberg promotion%s: Iceberg refuses it without a table rewrite; keep %v or add a new column",
			[lib.quote(name), old, new, _evo_promotion_note(old, new), old],
		),
		"path": sprintf("table.schema[%d].type", [hi]),
		"evidence": {
			"field": name,
			"base_type": old,
			"head_type": new,
			"base_index": bi,
			"format_version": _evo_format_version,
			"compatibility": _evo_mode,
		},
	}
}

_evo_promotion_note(old, new) := " (date to timestamp needs table.format_version 3)" if {
	_evo_date_to_ts(old, new)
} else := " (a decimal may only grow its precision, with the same scale)" if {
	_evo_decimal(old)
	_evo_decimal(new)
} else := ""

# ---------------------------------------------------------------- SW-SCHEMA-003

# METADATA
# title: Optional fields must not become required
# description: |
#   Existing data files may hold nulls in an optional column, so Iceberg refuses to make it
#   required. Fires for each field paired between base and head that is optional in the base
#   (required false or absent) and required in head, under every compatibility mode.
# custom:
#   id: SW-SCHEMA-003
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the field optional and enforce non-null values where the data is written or read
#     (quality.not_null reports nulls in the live rows), or add a new required column with a
#     default.
#   example: |
#     # base: {name: currency, type: string}
#     table:
#       schema: [{name: currency, type: string, required: true}]
deny contains f if {
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	not _evo_required(o)
	_evo_required(h)
	name := _evo_name(h)
	f := {
		"rule": "SW-SCHEMA-003",
		"message": sprintf(
			"field %s was optional in %s and is required now: existing data may hold nulls and Iceberg refuses the change; keep it optional",
			[lib.quote(name), _evo_base_name],
		),
		"path": sprintf("table.schema[%d].required", [p.head]),
		"evidence": {
			"field": name,
			"base_required": object.get(o, "required", null),
			"head_required": true,
			"compatibility": _evo_mode,
		},
	}
}

# ---------------------------------------------------------------- SW-SCHEMA-004

# METADATA
# title: New required fields need a default
# description: |
#   Rows written before a field existed have no value for it; Iceberg fills them from the
#   field's initial default and refuses a new required field without one. Fires for each head
#   field that pairs with no base field (by id, renamed_from or name), is required and has no
#   default, under every compatibility mode. A rename without an id or renamed_from reads as
#   a removal plus an addition, so it can fire here too.
# custom:
#   id: SW-SCHEMA-004
#   kind: diff
#   severity: error
#   remediation: |
#     Add the field as optional, or give it a default (the initial default of the old rows);
#     for a rename, keep the field's id or declare renamed_from.
#   example: |
#     table:
#       schema: [{name: channel, type: string, required: true}]   # new, no default
deny contains f if {
	_evo_active
	some hi in _evo_unpaired_heads
	h := _evo_head_fields[hi]
	is_object(h)
	_evo_required(h)
	object.get(h, "default", null) == null
	name := object.get(h, "name", null)
	f := {
		"rule": "SW-SCHEMA-004",
		"message": sprintf(
			"field %s is new and required but has no default: the rows written before it have no value and Iceberg refuses it; make it optional or give it a default",
			[lib.quote(name)],
		),
		"path": sprintf("table.schema[%d].default", [hi]),
		"value": name,
		"evidence": {"field": name, "type": _evo_type(h), "required": true, "default": null, "compatibility": _evo_mode},
	}
}

# ---------------------------------------------------------------- SW-SCHEMA-005

# METADATA
# title: Renames need allow_renames
# description: |
#   Consumers that read by name (SQL, Spark DataFrames, dashboards) see a rename as a dropped
#   column and a new one. Fires for each field paired between base and head by id (same id,
#   new name) or by renamed_from whose name changed while the base contract's
#   schema_evolution.allow_renames is false or absent. allow_renames is an explicit promise,
#   so this fires under every compatibility mode, none included; turning allow_renames on in
#   the same pull request does not count (the base's section is in force, and SW-SCHEMA-009
#   reports the change).
# custom:
#   id: SW-SCHEMA-005
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the old name (add the new column beside it if needed), or first set
#     schema_evolution.allow_renames to true in a reviewed change and tell the consumers.
#   example: |
#     # base: {name: amount, type: "decimal(12,2)", id: 3}; schema_evolution.allow_renames: false
#     table:
#       schema: [{name: gross_amount, type: "decimal(12,2)", id: 3}]
deny contains f if {
	not _evo_allow_renames
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	old := _evo_name(o)
	new := _evo_name(h)
	old != new
	by := _evo_paired_by(h, o)
	f := {
		"rule": "SW-SCHEMA-005",
		"message": sprintf(
			"field %s was renamed to %s (paired by %s) while schema_evolution.allow_renames is not true in %s: consumers that read by name lose the column; keep the old name or allow renames in a separate reviewed change",
			[lib.quote(old), lib.quote(new), by, _evo_base_name],
		),
		"path": sprintf("table.schema[%d].name", [p.head]),
		"evidence": {
			"base_name": old,
			"head_name": new,
			"paired_by": by,
			"allow_renames": object.get(_evo_base_section, "allow_renames", null),
			"compatibility": _evo_mode,
		},
	}
}

# ---------------------------------------------------------------- SW-SCHEMA-006

# A partition transform's output changes when its source column goes from old to new.
_evo_transform_changes(t, old, new) if {
	_evo_date_to_ts(old, new)
	t == "identity"
}

_evo_transform_changes(t, old, new) if {
	_evo_date_to_ts(old, new)
	is_string(t)
	startswith(t, "bucket[")
}

_evo_transform_changes(t, old, new) if {
	_evo_date_to_ts(old, new)
	is_string(t)
	startswith(t, "truncate[")
}

_evo_partition_spec := s if {
	s := object.get(_evo_head, ["table", "partition_spec"], [])
	is_array(s)
} else := []

# METADATA
# title: Promotions must not change partition values
# description: |
#   Iceberg refuses a type promotion of a partition source column when the partition
#   transform would compute other values for the same data: the existing partitions would no
#   longer match. Fires for each field whose base -> head type change is an allowed promotion
#   (see SW-SCHEMA-002) and that is the source of a head table.partition_spec entry whose
#   transform output changes, under every compatibility mode:
#
#   | transform | int->long, float->double, decimal widening | date->timestamp / timestamp_ns |
#   |---|---|---|
#   | identity | same values | changes |
#   | bucket[N] | same values (hashed as long / unscaled) | changes |
#   | truncate[W] | same values | changes |
#   | year, month, day, hour | same values | same values |
#   | void | same values (always null) | same values |
#
#   date -> timestamp is a promotion only on format version 3, so this fires there.
# custom:
#   id: SW-SCHEMA-006
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the column's type, or change the partition spec first (for example day(col)
#     instead of identity(col)) so the promotion keeps the partition values; or add a new
#     column with the new type.
#   example: |
#     # base: {name: order_date, type: date}; format_version: 3
#     table:
#       format_version: 3
#       schema: [{name: order_date, type: timestamp}]
#       partition_spec: [{source: order_date, transform: identity}]
deny contains f if {
	some [hi, _, old, new] in _evo_type_changes
	_evo_promotion(old, new)
	name := _evo_name(_evo_head_fields[hi])
	changed := [sprintf("table.partition_spec[%d] (%s)", [k, p.transform]) |
		some k, p in _evo_partition_spec
		is_object(p)
		object.get(p, "source", null) == name
		_evo_transform_changes(object.get(p, "transform", null), old, new)
	]
	count(changed) > 0
	f := {
		"rule": "SW-SCHEMA-006",
		"message": sprintf(
			"field %s is promoted from %v to %v, but it is the source of %s whose output would change: Iceberg refuses the promotion; keep the type or change the partition transform first",
			[lib.quote(name), old, new, concat(", ", changed)],
		),
		"path": sprintf("table.schema[%d].type", [hi]),
		"evidence": {"field": name, "base_type": old, "head_type": new, "partitions": changed},
	}
}

# ---------------------------------------------------------------- SW-SCHEMA-007

# What changed in the table schema, base -> head (added, removed, renamed, type, required).
_evo_schema_changes contains sprintf("added %v", [name]) if {
	_evo_active
	some hi in _evo_unpaired_heads
	h := _evo_head_fields[hi]
	is_object(h)
	name := object.get(h, "name", null)
}

_evo_schema_changes contains sprintf("removed %v", [name]) if {
	_evo_active
	some bi in _evo_unpaired_bases # (with _evo_active, a base field is paired exactly when _evo_pairs holds it)
	o := _evo_base_fields[bi]
	is_object(o)
	name := object.get(o, "name", null)
}

_evo_schema_changes contains sprintf("renamed %v to %v", [old, new]) if {
	some p in _evo_changed_pairs
	old := object.get(_evo_base_fields[p.base], "name", null)
	new := object.get(_evo_head_fields[p.head], "name", null)
	old != new
}

_evo_schema_changes contains sprintf("type of %v %v -> %v", [object.get(_evo_head_fields[hi], "name", null), old, new]) if {
	some [hi, _, old, new] in _evo_type_changes
}

_evo_schema_changes contains sprintf("%v made %s", [name, _evo_required_word(h)]) if {
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	_evo_required(o) != _evo_required(h)
	name := object.get(h, "name", null)
}

_evo_required_word(f) := "required" if {
	_evo_required(f)
} else := "optional"

_evo_ops(c) := ops if {
	ops := object.get(c, ["state", "operators"], [])
	is_array(ops)
} else := []

_evo_op_uid(op) := u if {
	is_object(op)
	u := object.get(op, "uid", null)
	is_string(u)
}

# Base operators by uid (first occurrence wins).
_evo_base_ops := {u: ops[i] |
	ops := _evo_ops(_evo_base)
	some u, i in lib.first_index([[k, j] | some j, op in ops; k := _evo_op_uid(op)])
}

# The base operator a head operator continues: same uid, else its restores_from.
_evo_base_op(op) := bo if {
	bo := _evo_base_ops[_evo_op_uid(op)]
} else := bo if {
	bo := _evo_base_ops[object.get(op, "restores_from", null)]
}

# METADATA
# title: Table schema changes must bump the state that carries them
# description: |
#   An operator whose state holds rows of the table's schema (carries_table_schema: true)
#   restores those rows with the old layout after a schema change unless its state schema is
#   migrated; the contract records that migration as a schema_version bump. When the base
#   contract's schema_evolution.coordinate_with_state is true (absent means false) and the
#   table schema changed between base and head (a field added, removed, renamed, or its type
#   or required-ness changed; doc, default and order edits do not count), fires for each head
#   operator with carries_table_schema true whose schema_version equals the one of its base
#   operator (matched by uid, or by restores_from naming the base uid; both absent counts as
#   equal). A new operator has nothing to migrate.
# custom:
#   id: SW-SCHEMA-007
#   kind: diff
#   severity: error
#   remediation: |
#     Migrate the operator's state to the new table schema and bump its schema_version in the
#     same pull request (or, if the state really does not hold table rows, set
#     carries_table_schema to false).
#   example: |
#     # base: table.schema [..., {name: channel, type: string}] added here; operator schema_version 1
#     schema_evolution: {coordinate_with_state: true}
#     state:
#       operators: [{uid: orders-enrich-join, kind: keyed, carries_table_schema: true, schema_version: 1}]
deny contains f if {
	_evo_coordinate
	count(_evo_schema_changes) > 0
	some idx, op in _evo_ops(_evo_head)
	is_object(op)
	object.get(op, "carries_table_schema", false) == true
	bo := _evo_base_op(op)
	version := object.get(op, "schema_version", null)
	version == object.get(bo, "schema_version", null)
	changes := sort([c | some c in _evo_schema_changes])
	f := {
		"rule": "SW-SCHEMA-007",
		"message": sprintf(
			"operator %s carries the table schema, and the table schema changed (%s), but its schema_version stayed %v: its state would restore rows of the old schema; migrate the state and bump schema_version",
			[lib.quote(object.get(op, "uid", null)), concat(", ", _evo_first(changes, 5)), version],
		),
		"path": sprintf("state.operators[%d].schema_version", [idx]),
		"evidence": {
			"uid": object.get(op, "uid", null),
			"base_uid": object.get(bo, "uid", null),
			"schema_version": version,
			"table_changes": changes,
		},
	}
}

_evo_first(xs, n) := array.concat(array.slice(xs, 0, n), ["..."]) if {
	count(xs) > n
} else := xs

# ---------------------------------------------------------------- SW-SCHEMA-009

# Strength of a mode: none < backward = forward < full; direction and transitivity apart.
_evo_rank := {
	"none": 0,
	"backward": 1, "forward": 1, "full": 2,
	"backward_transitive": 1, "forward_transitive": 1, "full_transitive": 2,
}

_evo_direction := {
	"none": "none",
	"backward": "backward", "forward": "forward", "full": "full",
	"backward_transitive": "backward", "forward_transitive": "forward", "full_transitive": "full",
}

_evo_weakening_reasons contains "a weaker mode" if {
	_evo_rank[_evo_head_mode] < _evo_rank[_evo_mode]
}

_evo_weakening_reasons contains "no longer transitive: only the base version would be checked" if {
	_evo_mode in _evo_transitive_modes
	_evo_rank[_evo_head_mode]
	not _evo_head_mode in _evo_transitive_modes
}

_evo_weakening_reasons contains "a change of direction: the side that upgrades last loses its protection" if {
	_evo_direction[_evo_mode] in {"backward", "forward"}
	_evo_direction[_evo_head_mode] in {"backward", "forward"}
	_evo_direction[_evo_mode] != _evo_direction[_evo_head_mode]
}

_evo_head_mode := _evo_mode_of(_evo_head_section)

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

# ---------------------------------------------------------------- SW-SCHEMA-010

# [head index, old type] of the fields whose type differs in head. Against the base only
# promotions count (a non-promotion is SW-SCHEMA-002; the base's pairs are computed already, so its
# widened fields are the type changes that are promotions); against an earlier version any
# difference does (SW-SCHEMA-002 compares base and head only).
_evo_type_diffs(fields) := diffs if {
	ctx := _evo_ctx(fields)
	diffs := {[hi, old] |
		some o in fields
		hi := _evo_pair(o, ctx)
		old := _evo_type(o)
		new := _evo_type(_evo_head_fields[hi])
		old != new
	}
}

_evo_widened_base := {[hi, old] |
	some [hi, _, old, new] in _evo_type_changes
	_evo_promotion(old, new)
}

_evo_widened_in[fields] := _evo_type_diffs(fields) if some fields in _evo_history_schemas

_evo_widened_heads contains hi if some [hi, _] in _evo_widened_base

_evo_widened_heads contains hi if {
	some diffs in _evo_widened_in
	some [hi, _] in diffs
}

# [label, commit, old type] of the compared versions in which head field hi had another type,
# newest first.
_evo_widened_from(hi) := array.concat(
	[[_evo_base_name, _evo_base_commit, old] | some [h, old] in _evo_widened_base; h == hi],
	[[_evo_version_label(c), c, old] |
		some [c, fields] in _evo_history
		some [h, old] in _evo_widened_in[fields]
		h == hi
	],
)

# METADATA
# title: Forward compatibility forbids widening a column
# description: |
#   Under forward or full (and their transitive forms) readers still on the old schema read
#   data written with the new one; a reader that expects an int cannot read a long, even
#   though Iceberg itself accepts the promotion. Fires for each head field whose type is an
#   allowed promotion of its base type (see SW-SCHEMA-002) while the base's compatibility is
#   forward, full, forward_transitive or full_transitive. Under the transitive forms every
#   earlier version counts too: a field whose type in any earlier version differs from head
#   fires (a difference against an earlier version is reported here whether or not it is a
#   promotion, since SW-SCHEMA-002 compares base and head only). A base -> head change that
#   is not a promotion is SW-SCHEMA-002 alone. Under backward and none promotions are safe.
#   One finding per head field.
# custom:
#   id: SW-SCHEMA-010
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the old type while old readers exist (add a new, wider column beside it), or
#     upgrade every reader first and change the compatibility mode in a reviewed change.
#   example: |
#     # base: {name: quantity, type: int}; schema_evolution: {compatibility: forward}
#     table:
#       schema: [{name: quantity, type: long}]
deny contains f if {
	_evo_active
	_evo_mode in _evo_forward_modes
	some hi in _evo_widened_heads
	not hi in _evo_refused_types
	seen := _evo_widened_from(hi)
	[label, commit, old0] := seen[0]
	h := _evo_head_fields[hi]
	name := _evo_name(h)
	f := {
		"rule": "SW-SCHEMA-010",
		"message": sprintf(
			"field %s is %v in %s and %v now, while schema_evolution.compatibility is %s: readers still on the old schema cannot read the wider type; keep %v or add a new column",
			[lib.quote(name), old0, label, _evo_type(h), _evo_mode, old0],
		),
		"path": sprintf("table.schema[%d].type", [hi]),
		"evidence": {
			"field": name,
			"old_type": old0,
			"head_type": _evo_type(h),
			"version": label,
			"commit": commit,
			"versions_differing": count(seen),
			"compatibility": _evo_mode,
		},
	}
}

# ---------------------------------------------------------------- SW-SCHEMA-012

# The consumers the base declares (metadata.consumers[].name): who reads the table as it is.
_evo_consumers := [n |
	_evo_base
	cs := object.get(input.base.contract, ["metadata", "consumers"], [])
	is_array(cs)
	some c in cs
	is_object(c)
	n := object.get(c, "name", null)
	is_string(n)
]

# The base protects its consumers' columns: protect_consumers in force and consumers declared.
_evo_protects if {
	_evo_protecting(_evo_base_section)
	count(_evo_consumers) > 0
}

# SW-SCHEMA-001 reports the removal of field n (required in a compared version, forward modes).
_evo_001_reports(n) if {
	_evo_mode in _evo_forward_modes
	n in _evo_removed_required_names
}

_evo_protect_evidence(name) := {
	"field": name,
	"consumers": _evo_consumers,
	"protect_consumers": object.get(_evo_base_section, "protect_consumers", null),
	"compatibility": _evo_mode,
	"base_ref": _evo_base_ref,
}

# METADATA
# title: Columns consumers read must not be removed or made optional
# description: |
#   A table with declared consumers (the base's metadata.consumers) promises them its columns:
#   a dashboard or a downstream job that selects a column breaks when it is gone, and one that
#   relies on a required column (a join key, a NOT NULL column of its own) breaks on the first
#   null. While the base's schema_evolution.protect_consumers is true (the default, also when the
#   section is absent), fires under every compatibility mode, none included, for each base
#   column that has no pair in head (paired by id, renamed_from or name: a rename is
#   SW-SCHEMA-005's, a removal plus an addition when it has neither) and for each column that
#   is required in the base and optional in head. A removal that SW-SCHEMA-001 reports (a
#   required field under forward, full or their transitive forms) is not reported twice.
#   Narrowing a column's type (long to int, a smaller decimal precision, another fixed length)
#   is SW-SCHEMA-002 under every mode, and making it required is SW-SCHEMA-003. The consumers
#   and the setting in force are the base's: a pull request that also drops the consumers or
#   turns protection off is still judged with them.
# custom:
#   id: SW-SCHEMA-012
#   kind: diff
#   severity: error
#   remediation: |
#     Keep the column (add a new one beside it if the data changes). To retire it, tell the
#     consumers and record their agreement as a waiver of this finding on the base branch
#     (approved_by, expires) before the pull request that removes it; or, for a table whose
#     consumers do not depend on its columns, set schema_evolution.protect_consumers to false
#     in a pull request of its own (SW-SCHEMA-009 asks for its review).
#   example: |
#     # base: metadata.consumers: [{name: finance-dashboard, ...}], no schema_evolution section
#     table:
#       schema: [{name: order_id, type: long, required: true}]   # amount removed
deny contains f if {
	_evo_active
	_evo_protects
	some bi in _evo_unpaired_bases
	o := _evo_base_fields[bi]
	name := _evo_name(o)
	not _evo_001_reports(name)
	f := {
		"rule": "SW-SCHEMA-012",
		"message": sprintf(
			"column %s was removed, but the table's consumers (%s) read it and schema_evolution.protect_consumers is in force in %s (compatibility %s): their queries break whatever the compatibility mode; keep the column, or tell them and record their agreement as a waiver on the base branch first",
			[lib.quote(name), concat(", ", _evo_consumers), _evo_base_name, _evo_mode],
		),
		"path": "table.schema",
		"value": name,
		"evidence": _evo_protect_evidence(name),
	}
}

# SW-SCHEMA-012: a required column made optional
deny contains f if {
	_evo_protects
	some p in _evo_changed_pairs
	o := _evo_base_fields[p.base]
	h := _evo_head_fields[p.head]
	_evo_required(o)
	not _evo_required(h)
	name := _evo_name(h)
	f := {
		"rule": "SW-SCHEMA-012",
		"message": sprintf(
			"column %s is required in %s and optional now, but the table's consumers (%s) read it and schema_evolution.protect_consumers is in force: a consumer that relies on it never being null (a join key, a NOT NULL column of its own) breaks on the first null; keep it required",
			[lib.quote(name), _evo_base_name, concat(", ", _evo_consumers)],
		),
		"path": sprintf("table.schema[%d].required", [p.head]),
		"value": name,
		"evidence": object.union(_evo_protect_evidence(name), {"base_required": true, "head_required": object.get(h, "required", null)}),
	}
}
