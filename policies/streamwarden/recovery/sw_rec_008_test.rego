package streamwarden.recovery

import rego.v1

import data.streamwarden.lib

# ---------------------------------------------------------------- fixtures

_tp_hour := 3600000

_tp_day := 86400000

_tp_in(head) := {"contract": head, "base": lib.base_doc(lib.example_contract)}

# The example contract with the value at `path` set to `value` (null: removed).
_tp_set(path, value) := json.patch(lib.example_contract, [{"op": "add", "path": path, "value": value}]) if {
	value != null
} else := json.patch(lib.example_contract, [{"op": "remove", "path": path}])

_tp_008(inp) := {f | some f in warn with input as inp; f.rule == "SW-REC-008"}

_tp_one(inp) := f if {
	fs := _tp_008(inp)
	count(fs) == 1
	some f in fs
}

_tp_all_consumers := ["finance-dashboard", "fraud-features"]

# ---------------------------------------------------------------- silent cases

test_promises_unchanged_example_passes if {
	inp := object.union(lib.example_input, {"base": lib.base_doc(lib.example_contract)})
	count(_tp_008(inp)) == 0
}

test_promises_silent_without_base if {
	head := _tp_set("/retention/rollback_window", _tp_hour)
	every base in [
		null,
		{"status": "added", "contract": null},
		{"status": "unparseable", "error": "bad", "contract": null},
		object.union(lib.base_doc(lib.example_contract), {"status": "added"}),
		"junk",
	] {
		count(_tp_008({"contract": head, "base": base})) == 0
	}
	count(_tp_008({"contract": head})) == 0
}

test_promises_made_stronger_pass if {
	every head in [
		_tp_set("/retention/rollback_window", 7 * _tp_day),
		_tp_set("/retention/snapshots/min_keep", 50),
		_tp_set("/retention/data/max_age", 800 * _tp_day),
		_tp_set("/quality/freshness/max_lag", 60000),
		_tp_set("/metadata/consumers/0/freshness", 60000),
	] {
		count(_tp_008(_tp_in(head))) == 0
	}
}

test_promises_rows_kept_without_a_deadline_pass if {
	count(_tp_008(_tp_in(_tp_set("/retention/data", null)))) == 0
}

test_promises_a_promise_the_base_did_not_make_passes if {
	base := json.patch(lib.example_contract, [{"op": "remove", "path": "/retention/rollback_window"}])
	inp := {"contract": _tp_set("/retention/rollback_window", _tp_hour), "base": lib.base_doc(base)}
	count(_tp_008(inp)) == 0
}

test_promises_added_or_renamed_sinks_and_consumers_pass if {
	renamed_sink := _tp_set("/job/sinks/0", {"name": "orders-v2", "kind": "iceberg", "table": "sales.orders", "delivery": "at_least_once"})
	count(_tp_008(_tp_in(renamed_sink))) == 0
	new_consumer := _tp_set("/metadata/consumers/-", {"name": "audit", "freshness": 7 * _tp_day, "contact": "#audit"})
	count(_tp_008(_tp_in(new_consumer))) == 0
	junk := _tp_set("/metadata/consumers/-", "junk")
	count(_tp_008(_tp_in(junk))) == 0
}

test_promises_at_least_once_made_exactly_once_passes if {
	base := json.patch(lib.example_contract, [{"op": "replace", "path": "/job/sinks/0/delivery", "value": "at_least_once"}])
	inp := {"contract": _tp_set("/job/sinks/0/delivery", "exactly_once"), "base": lib.base_doc(base)}
	count(_tp_008(inp)) == 0
}

test_promises_optional_lineage_made_required_passes if {
	base := json.patch(lib.example_contract, [{"op": "replace", "path": "/table/commit/lineage", "value": "optional"}])
	inp := {"contract": _tp_set("/table/commit/lineage", "required"), "base": lib.base_doc(base)}
	count(_tp_008(inp)) == 0
}

# ---------------------------------------------------------------- fail cases

test_promises_delivery_weakened_fires if {
	f := _tp_one(_tp_in(_tp_set("/job/sinks/0/delivery", "at_least_once")))
	f.path == "job.sinks[0].delivery"
	f.value == "at_least_once"
	f.evidence == {"field": "job.sinks[0].delivery", "base": "exactly_once", "head": "at_least_once", "consumers": _tp_all_consumers}
	f.message == `the delivery guarantee of sink "orders-table" is weakened from exactly_once in the base (origin/main) to at_least_once: a promise consumers rely on; tell finance-dashboard, fraud-features before merging`
}

test_promises_delivery_dropped_fires if {
	f := _tp_one(_tp_in(_tp_set("/job/sinks/0/delivery", null)))
	f.value == null
	contains(f.message, "to not set:")
}

test_promises_rollback_window_shortened_fires if {
	f := _tp_one(_tp_in(_tp_set("/retention/rollback_window", _tp_hour)))
	f.path == "retention.rollback_window"
	f.message == "the rollback window is weakened from 3d in the base (origin/main) to 1h: a promise consumers rely on; tell finance-dashboard, fraud-features before merging"
}

test_promises_rollback_window_dropped_fires if {
	f := _tp_one(_tp_in(_tp_set("/retention/rollback_window", null)))
	f.evidence.head == null
}

test_promises_lineage_weakened_fires if {
	f := _tp_one(_tp_in(_tp_set("/table/commit/lineage", "optional")))
	f.path == "table.commit.lineage"
	contains(f.message, "from required in the base (origin/main) to optional")
	g := _tp_one(_tp_in(_tp_set("/table/commit", {"max_interval": 300000})))
	g.value == null
}

test_promises_retention_lowered_fires if {
	every case in [
		["/retention/snapshots/max_age", _tp_day, "retention.snapshots.max_age"],
		["/retention/snapshots/min_keep", 2, "retention.snapshots.min_keep"],
		["/retention/checkpoints/num_retained", 1, "retention.checkpoints.num_retained"],
		["/retention/savepoints/max_age", _tp_day, "retention.savepoints.max_age"],
		["/retention/savepoints/min_keep", 1, "retention.savepoints.min_keep"],
		["/retention/data/max_age", 30 * _tp_day, "retention.data.max_age"],
	] {
		f := _tp_one(_tp_in(_tp_set(case[0], case[1])))
		f.path == case[2]
	}
	f := _tp_one(_tp_in(_tp_set("/retention/snapshots/min_keep", 2)))
	contains(f.message, "from 20 in the base (origin/main) to 2")
}

test_promises_retention_section_dropped_fires_per_promise if {
	fs := _tp_008(_tp_in(_tp_set("/retention", null)))
	{f.path | some f in fs} == {
		"retention.rollback_window", "retention.snapshots.max_age", "retention.snapshots.min_keep",
		"retention.checkpoints.num_retained", "retention.savepoints.max_age", "retention.savepoints.min_keep",
	}
}

test_promises_quality_freshness_loosened_fires if {
	f := _tp_one(_tp_in(_tp_set("/quality/freshness/max_lag", _tp_hour)))
	f.path == "quality.freshness.max_lag"
	contains(f.message, "from 15m in the base (origin/main) to 1h")
	g := _tp_one(_tp_in(_tp_set("/quality/freshness", null)))
	contains(g.message, "to not set")
}

test_promises_consumer_freshness_loosened_names_that_consumer if {
	f := _tp_one(_tp_in(_tp_set("/metadata/consumers/1/freshness", _tp_hour)))
	f.path == "metadata.consumers[1].freshness"
	f.evidence.consumers == ["fraud-features"]
	f.message == `the freshness promised to "fraud-features" is weakened from 10m in the base (origin/main) to 1h: a promise consumers rely on; tell fraud-features before merging`
	g := _tp_one(_tp_in(_tp_set("/metadata/consumers/0/freshness", null)))
	g.path == "metadata.consumers[0].freshness"
}

test_promises_without_consumers_still_fire if {
	base := json.patch(lib.example_contract, [{"op": "remove", "path": "/metadata/consumers"}])
	head := json.patch(base, [{"op": "replace", "path": "/retention/rollback_window", "value": _tp_hour}])
	f := _tp_one({"contract": head, "base": lib.base_doc(base)})
	f.evidence.consumers == []
	contains(f.message, "no consumer is declared, but a reader may rely on it")
	contains(f.message, "in the base (origin/main)")
}

test_promises_base_without_ref_is_named_the_base if {
	f := _tp_one({"contract": _tp_set("/retention/rollback_window", _tp_hour), "base": {"contract": lib.example_contract}})
	contains(f.message, "from 3d in the base to 1h")
}
