package streamwarden.table

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- SW-TABLE-006

test_table006_consumer_promised_more_than_deliverable if {
	inp := _t_freshness(60000, 300000, 300000)
	findings := deny with input as inp
	some f in findings
	f.rule == "SW-TABLE-006"
	f.path == "metadata.consumers[0].freshness"
	f.evidence == {
		"consumer": "fraud-features", "freshness": 300000, "checkpoint_interval": 60000,
		"commit_max_interval": 300000, "deliverable": 360000,
	}
	contains(f.message, `consumer "fraud-features" was promised freshness 5m but the pipeline delivers at best 6m (checkpoint.interval 1m + table.commit.max_interval 5m)`)
}

test_table006_equal_is_deliverable if {
	inp := _t_freshness(60000, 300000, 360000)
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-006")
}

test_table006_one_ms_short_fires if {
	inp := _t_freshness(60000, 300000, 359999)
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-006") == {"metadata.consumers[0].freshness"}
}

test_table006_without_commit_slack if {
	findings := deny with input as {"contract": {
		"metadata": {"consumers": [{"name": "a", "freshness": 60000}, {"name": "b", "freshness": 59999}]},
		"checkpoint": {"interval": 60000},
	}}
	lib.rule_paths(findings, "SW-TABLE-006") == {"metadata.consumers[1].freshness"}
	some f in findings
	f.evidence.commit_max_interval == 0
}

test_table006_one_finding_per_consumer if {
	inp := lib.contract_with({"checkpoint": {"interval": 3600000}})
	findings := deny with input as inp
	lib.rule_paths(findings, "SW-TABLE-006") == {"metadata.consumers[0].freshness", "metadata.consumers[1].freshness"}
}

test_table006_consumer_without_freshness_passes if {
	findings := deny with input as {"contract": {"metadata": {"consumers": [{"name": "a"}]}, "checkpoint": {"interval": 60000}}}
	lib.no_rule(findings, "SW-TABLE-006")
}

test_table006_without_interval_is_silent if {
	inp := lib.contract_without(["checkpoint/interval"])
	findings := deny with input as inp
	lib.no_rule(findings, "SW-TABLE-006")
}
