package streamwarden.table

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# SW-TABLE-004 (METADATA above): live identifier fields differ from the contract's
deny contains f if {
	count(_ice_cids) > 0
	live := _ice.schema.identifier_fields
	{x | some x in _ice_cids} != {x | some x in live}
	f := lib.finding(
		"SW-TABLE-004",
		"table.identifier_fields",
		sprintf(
			"the live table %s has identifier fields %v, the contract declares %v",
			[_ice_name, live, _ice_cids],
		),
		{"contract": _ice_cids, "live": live},
		{"source": "iceberg"},
	)
}

# SW-TABLE-004: upserts enabled on the live table, which has no identifier fields (when the contract
# declares none, the contract side already reports a contract that enables upserts itself)
deny contains f if {
	count(_ice_cids) == 0
	not upsert_enabled(object.get(_table, "properties", {}))
	_ice_upsert_live
	count(_ice.schema.identifier_fields) == 0
	f := lib.finding(
		"SW-TABLE-004",
		"table.identifier_fields",
		sprintf(
			"the live table %s sets write.upsert.enabled=true but has no identifier fields: the upsert sink cannot key its deletes",
			[_ice_name],
		),
		{"live_write.upsert.enabled": _ice.properties["write.upsert.enabled"], "live": []},
		{"source": "iceberg", "value": "live-upsert-without-identifier"},
	)
}
