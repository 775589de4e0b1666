package streamwarden.retention

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.iceberg]

# METADATA
# title: Old metadata files must be deleted after commit
# description: |
#   Fires when the live table's write.metadata.delete-after-commit.enabled is not true (Iceberg's
#   default is false): every commit leaves a metadata.json behind, and a streaming job commits
#   every checkpoint, so metadata files pile up in storage.
# custom:
#   id: SW-RET-006
#   severity: warning
#   remediation: |
#     Set write.metadata.delete-after-commit.enabled=true (and write.metadata.previous-versions-max)
#     on the table, and declare it under table.properties.
#   example: |
#     table: {properties: {write.metadata.delete-after-commit.enabled: "true"}}   # the table says false
warn contains f if {
	live := object.get(_ice.properties, "write.metadata.delete-after-commit.enabled", "false")
	lower(sprintf("%v", [live])) != "true"
	f := object.union(
		lib.finding(
			"SW-RET-006",
			`table.properties["write.metadata.delete-after-commit.enabled"]`,
			sprintf(
				"%s has write.metadata.delete-after-commit.enabled=%v: old metadata files are never deleted and pile up with every commit",
				[_ice_name, live],
			),
			{"write.metadata.delete-after-commit.enabled": live, "previous_versions_max": object.get(_ice.properties, "write.metadata.previous-versions-max", null)},
			{"source": "iceberg"},
		),
		{"value": live},
	)
}
