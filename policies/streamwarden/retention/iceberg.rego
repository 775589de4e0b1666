# Retention (SW-RET): the Iceberg-catalog side, on input.facts.iceberg (docs/facts-iceberg.md).
# facts.iceberg.retention holds what snapshot expiry keeps on the checked branch: the branch ref's
# own values, else the table's history.expire.* properties, else Iceberg's defaults (5 days, 1).
# Findings have "source": "iceberg" and the contract field concerned as their path.
package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

_ice := lib.iceberg(input)

_ice_retention := object.get(input.contract, "retention", {})

_ice_name := lib.iceberg_name(_ice)

_ice_source_text(source) := "the branch ref" if {
	source == "ref"
} else := "Iceberg's default" if {
	source == "default"
} else := "the table property"

# The contract's promises on how far back the table must be restorable.
_ice_promises contains {"path": "retention.rollback_window", "value": _ice_retention.rollback_window} if {
	is_number(_ice_retention.rollback_window)
}

_ice_promises contains {"path": "retention.snapshots.max_age", "value": _ice_retention.snapshots.max_age} if {
	is_number(_ice_retention.snapshots.max_age)
}

# The longest age any retention setting allows: the table's, and the contract's promises.
_ice_allowed := max(array.concat([_ice.retention.max_snapshot_age_ms], [p.value | some p in _ice_promises])) if {
	is_number(_ice.retention.max_snapshot_age_ms)
}
