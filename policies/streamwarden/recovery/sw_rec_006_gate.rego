package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.savepoint, mode.gate]

# SW-REC-006 (the restore side; METADATA above): the savepoint is older than what a
# rewindable source keeps, less its margin.
deny contains f if {
	is_number(_rg_sp.completed_ms)
	age := input.now_ms - _rg_sp.completed_ms
	some [idx, source, margin, limit] in _rg_kept_sources
	age >= limit
	parts := _rg_source_partitions(object.get(source, "name", null))
	f := lib.finding(
		"SW-REC-006",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"the %s to restore (%s, checkpoint %v) completed %s ago, and %s keeps %s, less %s, is %s: the records after the position it resumes from are older than that and may be deleted already, so the restored job would skip them%s; restore a newer savepoint",
			[
				_rg_kind, _rg_sp.location, _rg_sp.checkpoint_id, lib.fmt_age(age), lib.source_label(source, idx),
				lib.fmt_ms(source.retention), lib.source_margin_text(source), _age_or_none(limit), _rg_offsets_text(parts),
			],
		),
		{
			"savepoint": _rg_sp.location,
			"completed_ms": _rg_sp.completed_ms,
			"age_ms": age,
			"source": object.get(source, "name", null),
			"retention_ms": source.retention,
			"margin_ms": margin,
			"limit_ms": limit,
			"partitions": parts,
		},
		{"source": "savepoint", "value": {"savepoint": _rg_sp.location, "source": object.get(source, "name", null)}},
	)
}

# SW-REC-006: the savepoint's age cannot be told (fail closed)
deny contains f if {
	not is_number(object.get(_rg_sp, "completed_ms", null))
	some [idx, source, margin, limit] in _rg_kept_sources
	f := lib.finding(
		"SW-REC-006",
		sprintf("job.sources[%d].retention", [idx]),
		sprintf(
			"the age of %s (checkpoint %v) is unknown: neither Flink nor the storage tells when it completed, so whether %s still keeps what it resumes from (%s, less %s) cannot be checked",
			[_rg_sp.location, _rg_sp.checkpoint_id, lib.source_label(source, idx), lib.fmt_ms(source.retention), lib.source_margin_text(source)],
		),
		{
			"savepoint": _rg_sp.location,
			"completed_ms": null,
			"source": object.get(source, "name", null),
			"retention_ms": source.retention,
			"margin_ms": margin,
			"limit_ms": limit,
			"partitions": _rg_source_partitions(object.get(source, "name", null)),
		},
		{"source": "savepoint", "value": {"savepoint": _rg_sp.location, "source": object.get(source, "name", null)}},
	)
}
