package streamwarden.state

import rego.v1

import data.streamwarden.lib

_st_op(id, uid, extra) := object.union(
	{
		"operator_id": id,
		"name": uid,
		"uid": uid,
		"parallelism": 4,
		"max_parallelism": 128,
		"has_state": true,
		"keyed": true,
		"state_size": 2048,
		"matched": {"uid": uid, "path": "state.operators[0].uid", "derived": null},
		"closest": null,
		"candidates": [],
	},
	extra,
)

_st_sp(operators) := {
	"available": true,
	"configured": true,
	"location": "s3://lake-savepoints/orders/savepoint-4d986c-1a2b3c4d5e6f",
	"kind": "savepoint",
	"checkpoint_id": 12,
	"operators": operators,
}

_st_input(contract_patch, operators) := _st_input_with(object.union(lib.example_contract, contract_patch), operators)

_st_input_with(contract, operators) := {
	"contract": contract,
	"facts": object.union(lib.example_input.facts, {"savepoint": _st_sp(operators)}),
	"now_ms": 1764000000000,
	"mode": "gate",
}

_st_dedup := _st_op("04f0bc5ad44a2bf4b73330ee08fb0d5e", "orders-dedup", {})

_st_source := _st_op("45b0254a46cabbc3efeea5d2e170ea5b", "orders-source", {"keyed": false, "matched": {"uid": "orders-source", "path": "job.sources[0].uid", "derived": null}})

_st_orphan := _st_op("9c1e2f0a4b5d6e7f8a9b0c1d2e3f4a5b", "orders-dedupe", {
	"matched": null,
	"closest": {"uid": "orders-dedup", "distance": 1, "path": "state.operators[0].uid", "operator_id": "04f0bc5ad44a2bf4b73330ee08fb0d5e"},
})

# ---------------------------------------------------------------- helpers of this package's rules

test_recorded_names_the_uid_else_the_name_else_nothing if {
	_sp_recorded({"uid": "enrich", "name": "Enrich"}) == ` (uid "enrich")`
	_sp_recorded({"uid": null, "name": "Enrich"}) == ` (name "Enrich")`
	_sp_recorded({"uid": null, "name": null}) == ""
}

test_closest_names_the_nearest_uid_else_the_candidates_else_what_to_do if {
	_sp_closest({"closest": {"uid": "enrich", "path": "state.operators[0].uid", "distance": 1}}) == `; closest declared uid: "enrich" at state.operators[0].uid (edit distance 1)`
	_sp_closest({"closest": null, "candidates": [{"uid": "a", "path": "p"}]}) == `; declared uids with no state in the savepoint: "a" at p`
	_sp_closest({"closest": null, "candidates": []}) == "; no declared uid is a candidate: declare this operator's uid (or its restores_from)"
	_sp_path({"closest": null}) == "state.operators"
}
