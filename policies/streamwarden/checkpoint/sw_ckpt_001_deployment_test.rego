package streamwarden.checkpoint

import rego.v1

import data.streamwarden.deployment as dep

# --- SW-CKPT-001 ---------------------------------------------------------------------------------

test_dep_ckpt_001_interval_unset_fires_at_the_anchor if {
	in5 := dep.fx_input(dep.fx_contract, _dep_t_off)
	fs := deny with input as in5
	[f] := dep.fx_of("SW-CKPT-001", fs)
	f.file == "deploy/fd.yaml"
	f.line == 7
	f.path == "execution.checkpointing.interval"
	f.value == null
	contains(f.message, "Flink's default: no periodic checkpoints")
	contains(f.message, "to the contract's 1m")
	# SW-CKPT-003 does not repeat it, nor compare settings left at Flink's default
	count(dep.fx_of("SW-CKPT-003", fs)) == 0
}

test_dep_ckpt_001_interval_zero_fires_at_its_line if {
	zero := {"execution.checkpointing.interval": dep.fx_set("execution.checkpointing.interval", 0, 10)}
	in6 := dep.fx_input(dep.fx_contract, zero)
	fs := deny with input as in6
	[f] := dep.fx_of("SW-CKPT-001", fs)
	f.line == 10
	contains(f.message, "sets execution.checkpointing.interval to 0 at deploy/fd.yaml:10")
}

test_dep_ckpt_001_reason_exactly_once_sink_only if {
	contract := {"job": {"name": "x", "sinks": [{"name": "t", "delivery": "exactly_once"}]}}
	in7 := dep.fx_input(contract, _dep_t_off)
	fs := deny with input as in7
	[f] := dep.fx_of("SW-CKPT-001", fs)
	contains(f.message, "exactly-once sinks (t)")
	contains(f.message, "for example to 60 s")
}

test_dep_ckpt_001_quiet_for_a_stateless_pipeline if {
	in8 := dep.fx_input(dep.fx_stateless, _dep_t_off)
	count(dep.fx_of("SW-CKPT-001", deny)) == 0 with input as in8
}

test_dep_ckpt_001_and_004_per_job if {
	# the first job does not checkpoint (SW-CKPT-001 there); the second checkpoints without a
	# directory (SW-CKPT-004 missing): each fact is taken from the job's own configuration
	off := dep.fx_default("execution.checkpointing.interval", null)
	no_dir := dep.fx_default("execution.checkpointing.dir", null)
	inp := dep.fx_jobs_input(dep.fx_contract, [
		[true, {"execution.checkpointing.interval": off, "execution.checkpointing.dir": no_dir}],
		[true, {"execution.checkpointing.dir": no_dir}],
	])
	fs := deny with input as inp
	count(dep.fx_of("SW-CKPT-001", fs)) == 1
	[missing] := [f | some f in dep.fx_of("SW-CKPT-004", fs); f.evidence.reason == "missing"]
	missing.path == "execution.checkpointing.dir"
}
