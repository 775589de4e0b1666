# Table contract (SW-TABLE): helpers of the contract side, shared by the rule files of this
# package (one per rule id, sw_table_NNN.rego, each holding every body of its id and its METADATA).
package streamwarden.table

import rego.v1

_table := object.get(input.contract, "table", {})

# write.upsert.enabled is a string table property; accept a YAML boolean too.
upsert_enabled(props) if lower(sprintf("%v", [props["write.upsert.enabled"]])) == "true"

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
