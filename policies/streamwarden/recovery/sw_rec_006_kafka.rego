package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.kafka]

# SW-REC-006 (the broker side; METADATA in sw_rec_006.rego): with the broker's offsets
# (facts.kafka), a partition the savepoint resumes below the earliest offset the broker still
# holds skips the records in between. One finding per source of the savepoint's splits (the
# job.sources[] entry its operator's uid matches, else the splits' operator); evidence lists the
# window of each of its partitions: where the restore resumes, the broker's earliest and latest.
deny contains f if {
	sp := lib.gathered(input.facts.savepoint)
	kafka := lib.gathered(input.facts.kafka)
	some key in {_rk_key(p) | some p in _rk_windows(sp, kafka)}
	windows := [w | some w in _rk_windows(sp, kafka); _rk_key(w) == key]
	lost := [w | some w in windows; w.lost > 0]
	count(lost) > 0
	where := _rk_where(key)
	f := lib.finding(
		"SW-REC-006",
		where.path,
		sprintf(
			"the %s to restore (%s, checkpoint %v) resumes %s below the earliest offset the broker still holds: %s; the restored job would skip %s the broker deleted; restore a newer savepoint",
			[
				_rk_kind(sp), sp.location, sp.checkpoint_id, where.label,
				concat(", ", [_rk_lost_text(w) | some w in array.slice(lost, 0, 5)]), _rk_records(sum([w.lost | some w in lost])),
			],
		),
		{
			"savepoint": sp.location,
			"source": key.source,
			"operator_id": key.operator_id,
			"lost_records": sum([w.lost | some w in lost]),
			"partitions": windows,
		},
		{"source": "kafka", "value": {"savepoint": sp.location, "source": key.source, "operator_id": key.operator_id}},
	)
}

# Each partition the savepoint resumes at an offset, with the broker's window for it.
_rk_windows(sp, kafka) := [w |
	some p in object.get(sp, ["kafka", "partitions"], [])
	is_number(p.offset)
	some q in object.get(kafka, ["topics", p.topic, "partitions"], [])
	q.partition == p.partition
	w := {
		"source": p.source,
		"operator_id": p.operator_id,
		"topic": p.topic,
		"partition": p.partition,
		"restore_offset": p.offset,
		"earliest": q.earliest,
		"latest": q.latest,
		"lost": max([0, q.earliest - p.offset]),
	}
]

_rk_key(w) := {"source": w.source, "operator_id": w.operator_id}

# Where a source's finding lands: its job.sources[] entry, else the job's sources.
_rk_where(key) := {"path": sprintf("job.sources[%d]", [idx]), "label": sprintf("%s (job.sources[%d])", [lib.quote(key.source), idx])} if {
	is_string(key.source)
	some idx, s in object.get(input.contract, ["job", "sources"], [])
	s.name == key.source
} else := {"path": "job.sources", "label": sprintf("the Kafka source of operator %s", [key.operator_id])}

_rk_lost_text(w) := sprintf("%s[%v] at offset %v, the broker's earliest is %v (%s lost)", [w.topic, w.partition, w.restore_offset, w.earliest, _rk_records(w.lost)])

_rk_records(n) := "1 record" if n == 1 else := sprintf("%v records", [n])

_rk_kind(sp) := k if {
	k := sp.kind
	is_string(k)
} else := "savepoint"
