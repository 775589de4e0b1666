# State contract (SW-STATE): helpers of the contract side, shared by the rule files of this
# package (one per rule id, sw_state_NNN.rego, each holding every body of its id and its METADATA).
package streamwarden.state

import rego.v1

import data.streamwarden.lib

_state := object.get(input.contract, "state", {})

_state_operators := object.get(_state, "operators", [])

# 1 GiB: above this, heap (hashmap) state makes checkpoints and GC pauses too slow (SW-STATE-002).
hashmap_max_bytes := 1073741824

_backend_note := "" if {
	_state.backend
} else := " (state.backend not set: Flink's default)"

_incremental_text(x) := "not set (Flink default: false)" if {
	x == null
} else := sprintf("%v", [x])

# The positive SQL state TTL from the deployment files, if any (SW-STATE-003).
_sql_state_ttl := v if {
	input.facts.deployment.available == true
	v := input.facts.deployment.config["table.exec.state.ttl"].value
	lib.positive(v)
}

_ttl_text(x) := "no ttl" if {
	x == null
} else := sprintf("ttl %s (never expires)", [lib.fmt_ms(x)])

_max_par_text(x) := "not set" if {
	x == null
} else := sprintf("%v", [x])

_job_parallelism := p if {
	p := input.contract.job.parallelism
	lib.positive(p)
} else := null

_job_derived := lib.derived_max_parallelism(_job_parallelism) if {
	_job_parallelism != null
} else := null

_derived_text := sprintf("%v for job.parallelism %v, the same for any parallelism up to %v", [m, _job_parallelism, lib.derived_up_to(m)]) if {
	m := _job_derived
	m != null
} else := "128 for any parallelism up to 85, more above"

# The compatibility mode: normalization fills in the schema's default (backward); a document built
# by hand may lack it, or hold a value that is none of the modes.
_compatibility := m if {
	m := object.get(input.contract, ["schema_evolution", "compatibility"], "backward")
	is_string(m)
} else := "backward"
