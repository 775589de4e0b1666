# Table contract (SW-TABLE): the contract side of each rule.
# Iceberg-catalog sides of the same ids live in the other table_*.rego files of this package;
# their METADATA stays here, above the first body of each id.
package streamwarden.table

import rego.v1

import data.streamwarden.lib

_table := object.get(input.contract, "table", {})

# write.upsert.enabled is a string table property; accept a YAML boolean too.
upsert_enabled(props) if lower(sprintf("%v", [props["write.upsert.enabled"]])) == "true"

# METADATA
# title: Upsert tables need identifier fields
# description: |
#   The Iceberg Flink sink in upsert mode writes equality deletes keyed by the table's
#   identifier fields; without them it cannot start (or cannot deduplicate). The contract side
#   fires when table.properties sets write.upsert.enabled to "true" but table.identifier_fields
#   is absent or empty. The catalog side fires when the live table has no identifier fields or
#   they differ from the contract.
# custom:
#   id: SW-TABLE-004
#   severity: error
#   remediation: |
#     Declare table.identifier_fields (required, primitive columns that identify a row, for
#     example [order_id]) and set them on the table, or drop write.upsert.enabled.
#   example: |
#     table:
#       properties: {write.upsert.enabled: "true"}   # no identifier_fields
deny contains f if {
	upsert_enabled(object.get(_table, "properties", {}))
	fields := object.get(_table, "identifier_fields", [])
	count(fields) == 0
	f := {
		"rule": "SW-TABLE-004",
		"message": sprintf("table.properties sets write.upsert.enabled to true but table.identifier_fields is empty: upserts need a row identity; declare identifier_fields: required primitive columns of table.schema that identify a row%s", [_t004_hint]),
		"path": "table.identifier_fields",
		"evidence": {
			"write.upsert.enabled": _table.properties["write.upsert.enabled"],
			"identifier_fields": object.get(_table, "identifier_fields", null),
		},
	}
}

# A candidate from the contract's own schema: its first required column of a type Iceberg allows
# in identifier fields (primitive, not float or double).
_t004_candidates := [f.name |
	some f in object.get(_table, "schema", [])
	is_object(f)
	f.required == true
	is_string(f.type)
	not lower(f.type) in {"float", "double"}
	not startswith(lower(f.type), "struct")
	not startswith(lower(f.type), "list")
	not startswith(lower(f.type), "map")
]

_t004_hint := sprintf(" (for example [%s])", [_t004_candidates[0]]) if count(_t004_candidates) > 0 else := ""

# Freshness the pipeline can deliver: Iceberg commits on checkpoint, plus the commit slack.
_commit_slack := object.get(_table, ["commit", "max_interval"], 0)

# METADATA
# title: Consumers must not be promised more freshness than the pipeline delivers
# description: |
#   The Iceberg sink commits on checkpoint, so data reaches readers at best every
#   checkpoint.interval, plus the table.commit.max_interval slack (0 when absent). Fires for each
#   metadata.consumers[] entry whose freshness is below that sum (equal is fine). Silent when
#   checkpoint.interval is absent (SW-CKPT-001 covers that).
# custom:
#   id: SW-TABLE-006
#   severity: error
#   remediation: |
#     Shorten checkpoint.interval or table.commit.max_interval, or agree a looser freshness with
#     the consumer.
#   example: |
#     metadata: {consumers: [{name: fraud-features, freshness: 1m, contact: "fraud@example.com"}]}
#     checkpoint: {interval: 60s}
#     table: {commit: {max_interval: 5m}}
deny contains f if {
	interval := input.contract.checkpoint.interval
	is_number(interval)
	deliverable := interval + _commit_slack
	some idx, consumer in object.get(input.contract, ["metadata", "consumers"], [])
	freshness := consumer.freshness
	is_number(freshness)
	deliverable > freshness
	f := {
		"rule": "SW-TABLE-006",
		"message": sprintf(
			"consumer %s was promised freshness %s but the pipeline delivers at best %s (checkpoint.interval %s + table.commit.max_interval %s); shorten the interval or relax the promise",
			[lib.quote(object.get(consumer, "name", null)), lib.fmt_ms(freshness), lib.fmt_ms(deliverable), lib.fmt_ms(interval), lib.fmt_ms(_commit_slack)],
		),
		"path": sprintf("metadata.consumers[%d].freshness", [idx]),
		"evidence": {
			"consumer": object.get(consumer, "name", null),
			"freshness": freshness,
			"checkpoint_interval": interval,
			"commit_max_interval": _commit_slack,
			"deliverable": deliverable,
		},
	}
}
