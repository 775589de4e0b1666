# Data facts (SW-DATA): what a Spark scan of the table's live rows proves about the contract's
# quality promises, on input.facts.data (docs/facts-data.md). Silent unless the data facts are
# available: a configured scan that failed is SW-FACT-001's to report. Findings have
# "source": "data" and the contract field concerned as their path.
package streamwarden.data

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.data]

_data := lib.gathered(input.facts.data)

_quality := object.get(input.contract, "quality", {})

_table_name := lib.data_table_name(_data)

# A time column the scan could not measure: missing from the table, or of a type without time.
_unmeasurable(fact, field) := sprintf("%s %s does not exist in the live table schema of %s", [field, fact.column, _table_name]) if {
	fact.missing == true
} else := sprintf("%s %s cannot be measured: %s", [field, fact.column, fact.error]) if {
	is_string(fact.error)
}

_scan_evidence := {"scan_mode": _data.scan.mode, "snapshot_id": _data.snapshot_id}

_key_text(sample) := concat(", ", [sprintf("%s=%v", [k, v]) | some k, v in sample.key])

# the duplicated values, or why none are shown (the environment shows row values only where
# iceberg.data.show_values allows it)
_values_text(fact) := "; values not shown (the environment's iceberg.data.show_values is off)" if {
	fact.values_shown == false
} else := _examples(fact.samples)

_examples(samples) := "" if {
	count(samples) == 0
} else := sprintf(", e.g. %s", [concat("; ", [sprintf("(%s) x%v", [_key_text(s), s.count]) | some s in samples])])

# Where a not-null promise is declared: quality.not_null[i] first, else table.schema[j].required.
_null_path(col) := sprintf("quality.not_null[%d]", [i]) if {
	some i, c in _quality.not_null
	c == col
} else := sprintf("table.schema[%d].required", [j]) if {
	some j, fld in input.contract.table.schema
	fld.name == col
} else := "quality.not_null"

_declared_text(info) := concat(" and ", [_declared_word(d) | some d in info.declared_in])

_declared_word(d) := "in quality.not_null" if d == "quality.not_null"

_declared_word(d) := "required in table.schema" if d == "table.schema"
