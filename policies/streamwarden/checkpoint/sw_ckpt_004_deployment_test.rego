package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-CKPT-004 ---------------------------------------------------------------------------------

test_dep_ckpt_004_jobmanager_storage if {
	in16 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.storage": dep.fx_set("state.checkpoint-storage", "jobmanager", 30)})
	fs := deny with input as in16
	[f] := dep.fx_of("SW-CKPT-004", fs)
	f.path == "execution.checkpointing.storage"
	f.line == 30
	f.evidence.reason == "jobmanager"
}

test_dep_ckpt_004_local_directories if {
	every dir in ["file:///tmp/ckpt", "/var/flink/ckpt"] {
		in17 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.dir": dep.fx_set("state.checkpoints.dir", dir, 17)})
		fs := deny with input as in17
		[f] := dep.fx_of("SW-CKPT-004", fs)
		f.path == "execution.checkpointing.dir"
		f.value == dir
		contains(f.message, "sets state.checkpoints.dir (execution.checkpointing.dir in Flink 2.x) to")
	}
}

test_dep_ckpt_004_missing_directory_while_checkpointing if {
	in18 := dep.fx_input(dep.fx_contract, {"execution.checkpointing.dir": dep.fx_default("execution.checkpointing.dir", null)})
	fs := deny with input as in18
	[f] := dep.fx_of("SW-CKPT-004", fs)
	f.line == 7
	f.evidence.reason == "missing"
}

test_dep_ckpt_004_missing_directory_quiet_when_not_checkpointing if {
	overrides := object.union(_dep_t_off, {"execution.checkpointing.dir": dep.fx_default("execution.checkpointing.dir", null)})
	in19 := dep.fx_input(dep.fx_contract, overrides)
	count(dep.fx_of("SW-CKPT-004", deny)) == 0 with input as in19
}
