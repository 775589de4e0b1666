package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: The live partition spec must match the contract
# description: |
#   Compares table.partition_spec (source column and transform, in order) with the live table's
#   default partition spec. Fires for a declared partition field the table lacks, a live
#   partition field the contract does not declare, and the same fields in another order. Void
#   fields (removed partition fields kept by format v1) are ignored. Silent when the contract
#   declares no partition_spec; an empty list means unpartitioned.
# custom:
#   id: SW-TABLE-002
#   severity: error
#   remediation: |
#     Evolve the table's partition spec (update_spec / ALTER TABLE ... ADD/DROP PARTITION FIELD)
#     to the contract, or update table.partition_spec to the live spec.
#   example: |
#     table:
#       partition_spec: [{source: event_time, transform: day}]   # the table is partitioned by hour
deny contains f if {
	some i, p in _ice_contract_partition
	live := {_ice_pkey(q) | some q in _ice_live_partition}
	not _ice_pkey(p) in live
	f := lib.finding(
		"SW-TABLE-002",
		sprintf("table.partition_spec[%d]", [i]),
		sprintf(
			"partition field %s(%s) is declared but not in the live partition spec of %s (spec id %v: %s)",
			[p.transform, p.source, _ice_name, _ice.partition_spec.spec_id, _ice_spec_text(_ice_live_partition)],
		),
		{"contract": p, "live_spec": _ice_live_partition, "spec_id": _ice.partition_spec.spec_id},
		{"source": "iceberg"},
	)
}

# SW-TABLE-002: a live partition field the contract does not declare
deny contains f if {
	_ice_contract_partition
	some q in _ice_live_partition
	declared := {_ice_pkey(p) | some p in _ice_contract_partition}
	not _ice_pkey(q) in declared
	f := lib.finding(
		"SW-TABLE-002",
		"table.partition_spec",
		sprintf(
			"the live table %s is partitioned by %s(%s) (spec id %v), which table.partition_spec does not declare",
			[_ice_name, q.transform, q.source, _ice.partition_spec.spec_id],
		),
		{"contract": _ice_contract_partition, "live": q, "spec_id": _ice.partition_spec.spec_id},
		{"source": "iceberg", "value": _ice_pkey(q)},
	)
}

# SW-TABLE-002: the same fields in another order
deny contains f if {
	declared := [_ice_pkey(p) | some p in _ice_contract_partition]
	live := [_ice_pkey(q) | some q in _ice_live_partition]
	declared != live
	{k | some k in declared} == {k | some k in live}
	f := lib.finding(
		"SW-TABLE-002",
		"table.partition_spec",
		sprintf(
			"the live partition spec of %s orders its fields %s, the contract %s",
			[_ice_name, _ice_spec_text(_ice_live_partition), _ice_spec_text(_ice_contract_partition)],
		),
		{"contract": _ice_contract_partition, "live": _ice_live_partition, "spec_id": _ice.partition_spec.spec_id},
		{"source": "iceberg", "value": "order"},
	)
}
