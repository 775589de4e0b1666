# Schema evolution (SW-SCHEMA): helpers of the diff side, the base branch's contract
# (input.base.contract) against the pull request's (input.contract), shared by the rule files of
# this package (one per rule id, sw_schema_NNN.rego). SW-SCHEMA-008 compares the live table.
#
# Every diff rule is silent unless input.base is an object whose status is "present" (or
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

_evo_base_doc := lib.diff_base_doc(input)

_evo_base := lib.diff_base(input)

_evo_head := lib.diff_head(input.contract)

# Where the base came from, for messages and evidence.
_evo_base_ref := object.get(_evo_base_doc, "ref", null)

_evo_base_commit := object.get(_evo_base_doc, "commit", null)

_evo_base_name := lib.diff_base_name(input)

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

# decimal(P,S) -> [P, S]
_evo_decimal(t) := [lib.digits_value(m[1]), lib.digits_value(m[2])] if {
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

_evo_promotion_note(old, new) := " (date to timestamp needs table.format_version 3)" if {
	_evo_date_to_ts(old, new)
} else := " (a decimal may only grow its precision, with the same scale)" if {
	_evo_decimal(old)
	_evo_decimal(new)
} else := ""

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

# ---------------------------------------------------------------- SW-SCHEMA-012

# The consumers the base declares (metadata.consumers[].name): who reads the table as it is.
_evo_consumers := names if {
	_evo_base
	names := lib.consumer_names(input.base.contract)
} else := []

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
