package streamwarden.facts

import rego.v1

# METADATA
# title: A contract reads only the tables its environment lets it read
# description: |
#   The environment of streamwarden.yaml (in a pull request: the trusted ref's) decides which
#   catalogs and tables a contract may read: iceberg.catalogs (unless use_pyiceberg_config) and the
#   grants of iceberg.allow (without them, in a pull request, only the table the contract's base
#   version reads). input.facts.access holds that decision; when it refuses, nothing of the table
#   was read (facts.iceberg and facts.data say refused) and this finding fails the run in every
#   mode, at the contract field that names what was refused (table.catalog or table.identifier).
#   A fail-closed rule, like SW-FACT-001: it cannot be waived (SW-WAIVER-001 refuses the waiver).
# custom:
#   id: SW-FACT-002
#   severity: error
#   remediation: |
#     Name a table the environment grants to this contract, or have whoever owns streamwarden.yaml
#     on the default branch grant it (environments.<env>.iceberg.allow: a namespace or table, its
#     catalog, the owners) or configure the catalog (iceberg.catalogs).
#   example: |
#     facts: {access: {allowed: false, catalog: lake, table: sales.orders, owner: web-analytics, field: table.identifier, reason: "no entry of iceberg.allow grants lake.sales.orders to owner 'web-analytics'", grant: null}}
deny contains f if {
	access := input.facts.access
	access.allowed == false
	f := {
		"rule": "SW-FACT-002",
		"severity": "error",
		"message": sprintf(
			"the environment does not let this contract read %s.%s: %s; no facts of the table were gathered",
			[access.catalog, access.table, _error_text(access.reason)],
		),
		"path": _access_path(access),
		"value": sprintf("%s.%s", [access.catalog, access.table]),
		"evidence": {
			"catalog": access.catalog, "table": access.table,
			"owner": access.owner, "reason": access.reason,
		},
	}
}
