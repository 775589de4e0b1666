package streamwarden.facts

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# SW-FACT-001: the table was read but its history (previous metadata files, the files a clean-up
# removed) could not be: SW-REC-007 cannot tell rollbacks, deletes or lost rows from it.
warn contains f if {
	ice := lib.iceberg(input)
	h := ice.history
	is_object(h)
	h.available == false
	f := object.union(
		{
			"rule": "SW-FACT-001",
			"message": sprintf(
				"iceberg facts history of %s could not be gathered: %s; rules that need them were not evaluated",
				[lib.iceberg_name(ice), _error_text(object.get(h, "error", null))],
			),
			"path": "facts.iceberg.history",
			"value": "iceberg.history",
			"source": "iceberg",
			"evidence": {"source": "iceberg", "section": "history", "error": object.get(h, "error", null)},
		},
		lib.gate_severity,
	)
}
