package streamwarden.deployment

import rego.v1

# --- SW-DEPLOY-005 -----------------------------------------------------------------------------

test_deploy_005_quiet_when_aligned if {
	in15 := fx_input(fx_contract, {})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as in15
}

test_deploy_005_backend_differs if {
	in16 := fx_input(fx_contract, {"state.backend.type": fx_set("state.backend", "hashmap", 21)})
	fs := deny with input as in16
	[f] := fx_of("SW-DEPLOY-005", fs)
	f.path == "state.backend.type"
	f.line == 21
	contains(f.message, "the contract says rocksdb (state.backend) but the repository sets state.backend (state.backend.type in Flink 2.x) to hashmap")
}

test_deploy_005_names_the_key_as_written_and_its_2x_name if {
	old := deny with input as fx_input(fx_contract, {"execution.checkpointing.dir": fx_set("state.checkpoints.dir", "s3://other/orders", 17)})
	[f] := fx_of("SW-DEPLOY-005", old)
	f.path == "execution.checkpointing.dir"
	f.evidence.deployment_key == "state.checkpoints.dir"
	contains(f.message, "sets state.checkpoints.dir (execution.checkpointing.dir in Flink 2.x) to s3://other/orders at ")
	new := deny with input as fx_input(fx_contract, {"execution.checkpointing.dir": fx_set("execution.checkpointing.dir", "s3://other/orders", 17)})
	[g] := fx_of("SW-DEPLOY-005", new)
	contains(g.message, "sets execution.checkpointing.dir to s3://other/orders at ")
	not contains(g.message, "in Flink 2.x")
}

test_deploy_005_default_backend_points_at_the_anchor if {
	in17 := fx_input(fx_contract, {"state.backend.type": fx_default("state.backend.type", "hashmap")})
	fs := deny with input as in17
	[f] := fx_of("SW-DEPLOY-005", fs)
	f.line == 7
	contains(f.message, "leaves state.backend.type unset, so Flink uses its default hashmap")
}

test_deploy_005_checkpoint_location_differs if {
	in18 := fx_input(fx_contract, {"execution.checkpointing.dir": fx_set("execution.checkpointing.dir", "s3://other/orders", 17)})
	fs := deny with input as in18
	[f] := fx_of("SW-DEPLOY-005", fs)
	f.path == "execution.checkpointing.dir"
	f.evidence.contract == "s3://lake-checkpoints/orders"
}

test_deploy_005_leaves_nondurable_and_missing_dirs_to_ckpt_004 if {
	local := fx_set("execution.checkpointing.dir", "file:///tmp/ckpt", 17)
	in19 := fx_input(fx_contract, {"execution.checkpointing.dir": local})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as in19
	missing := fx_default("execution.checkpointing.dir", null)
	in20 := fx_input(fx_contract, {"execution.checkpointing.dir": missing})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as in20
}

test_deploy_placeholder_value_is_not_judged if {
	# the backend is a placeholder: SW-DEPLOY-005 must not compare it with the contract
	e := {"value": null, "raw": "${BACKEND}", "key": "state.backend.type", "file": "deploy/c.yaml", "line": 3, "kind": "flink-config", "default": false, "placeholder": "${BACKEND}"}
	inp := fx_input(fx_contract, {"state.backend.type": e})
	count(fx_of("SW-DEPLOY-005", deny)) == 0 with input as inp
	count(settings("state.backend.type")) == 0 with input as inp
}
