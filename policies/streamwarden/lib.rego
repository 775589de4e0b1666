# Shared helpers for the built-in policies: readable units in messages and small predicates.
# No rules (deny/warn/info) live here.
package streamwarden.lib

import rego.v1

# Largest unit first: a value is printed in the largest unit that divides it exactly.
_ms_units := [
	{"unit": "d", "size": 86400000},
	{"unit": "h", "size": 3600000},
	{"unit": "m", "size": 60000},
	{"unit": "s", "size": 1000},
]

_byte_units := [
	{"unit": "TiB", "size": 1099511627776},
	{"unit": "GiB", "size": 1073741824},
	{"unit": "MiB", "size": 1048576},
	{"unit": "KiB", "size": 1024},
]

# is_int(x): x is a whole number (JSON integers; 2.0 counts).
is_int(x) if {
	is_number(x)
	floor(x) == x
}

# fmt_ms(ms): a duration in milliseconds as the contract would write it:
# 90000 -> "90s", 600000 -> "10m", 7200000 -> "2h", 604800000 -> "7d", 1500 -> "1500ms", 0 -> "0s".
# Anything that is not a whole number is printed as it is.
fmt_ms(ms) := "0s" if {
	ms == 0
} else := out if {
	is_int(ms)
	fits := [u | some u in _ms_units; ms % u.size == 0]
	count(fits) > 0
	out := sprintf("%v%s", [ms / fits[0].size, fits[0].unit])
} else := out if {
	is_int(ms)
	out := sprintf("%vms", [ms])
} else := sprintf("%v", [ms])

# fmt_age(ms): a measured age or lag for a message, to the second, largest unit first:
# 396019 -> "6m36s", 2820000 -> "47m", 90061000 -> "1d1h1m1s", under a second -> "0s".
# (fmt_ms prints a contract value exactly as the contract would write it; an age is not one.)
fmt_age(ms) := "0s" if {
	ms < 1000
} else := concat("", [p |
	some u in [["d", 86400000, 1000000000000], ["h", 3600000, 24], ["m", 60000, 60], ["s", 1000, 60]]
	n := floor(ms / u[1]) % u[2]
	n > 0
	p := sprintf("%v%s", [n, u[0]])
])

# fmt_bytes(b): a size in bytes as the contract would write it:
# 1073741824 -> "1GiB", 53687091200 -> "50GiB", 1536 -> "1536B" (not a whole KiB count), 0 -> "0B".
fmt_bytes(b) := "0B" if {
	b == 0
} else := out if {
	is_int(b)
	fits := [u | some u in _byte_units; b % u.size == 0]
	count(fits) > 0
	out := sprintf("%v%s", [b / fits[0].size, fits[0].unit])
} else := out if {
	is_int(b)
	out := sprintf("%vB", [b])
} else := sprintf("%v", [b])

# fmt_size(b): a measured size in bytes for a message, to a tenth of the largest unit it reaches:
# 15032385536 -> "14.0GiB", 1536 -> "1.5KiB", under a KiB -> "512B".
# (fmt_bytes prints a contract value exactly as the contract would write it; a measure is not one.)
fmt_size(b) := out if {
	fits := [u | some u in _byte_units; b >= u.size]
	count(fits) > 0
	tenths := round((b * 10) / fits[0].size)
	out := sprintf("%v.%v%s", [floor(tenths / 10), tenths % 10, fits[0].unit])
} else := sprintf("%vB", [b])

# digits_value(s): a string of decimal digits as a number ("" and leading zeros included:
# to_number refuses "08"; "" is 0).
digits_value(s) := 0 if {
	trim_left(s, "0") == ""
} else := to_number(trim_left(s, "0"))

# blank(x): x is absent-like: not a string, or only whitespace.
blank(x) if not is_string(x)

blank(x) if {
	is_string(x)
	trim_space(x) == ""
}

# positive(x): x is a number above zero.
positive(x) if {
	is_number(x)
	x > 0
}

# quote(x): x for a message: strings in double quotes, anything else as written.
quote(x) := sprintf("%q", [x]) if {
	is_string(x)
} else := sprintf("%v", [x])

# first_index(pairs): for pairs [key, index], {key: the lowest index of that key}: "the first
# occurrence wins" in one sort, where a comprehension per key would cost the list's length squared
# (a 5,000-column schema).
# (Each sorted pair is compared with its neighbour inside the comprehension: a helper function
# called per pair with the sorted list took 2.5x as long on regorus at 5,000 pairs. Keys that are
# all distinct, the usual case, need no sort at all.)
first_index(pairs) := idx if {
	count({p[0] | some p in pairs}) == count(pairs)
	idx := {p[0]: p[1] | some p in pairs}
} else := object.union(
	{s[0][0]: s[0][1] | s := sort(pairs); count(s) > 0},
	{p[0]: p[1] |
		s := sort(pairs)
		some k, p in s
		k > 0
		s[k - 1][0] != p[0]
	},
)

# --- helpers the rule files share -------------------------------------------------------------
# Functions, not rules: on regorus, a rule reached through an import (`lib.x`) costs about as much
# as evaluating the whole imported document; a function call, or a full `data.` path, does not.

# finding(rule, path, message, evidence, extra): the element every rule emits,
# {"rule", "message", "path", "evidence"}, plus the fields of extra ("source", "value", "file",
# "line": where the finding's facts came from).
finding(rule, path, message, evidence, extra) := object.union(extra, {
	"rule": rule,
	"message": message,
	"path": path,
	"evidence": evidence,
})

# unlimited_failures(n): a tolerable-failed-checkpoints count that never fails the job. Flink
# stores it as a Java int: a negative value (how the contract writes unlimited) or
# Integer.MAX_VALUE.
unlimited_failures(n) if n < 0

unlimited_failures(n) if n >= 2147483647

# derived_max_parallelism(p): the max parallelism Flink derives for parallelism p when none is set
# (pipeline.max-parallelism -1): KeyGroupRangeAssignment.computeDefaultMaxParallelism, the power of
# two at or above p + p/2 (integer division), at least 128 and at most 32768. Flink derives it
# only for state it does not restore: on a restore it keeps the savepoint's max parallelism.
derived_max_parallelism(p) := min({max({x, 128}), 32768}) if {
	x := min({q | some q in _powers_of_two; q >= p + floor(p / 2)})
}

_powers_of_two := [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536]

# derived_up_to(m): the largest parallelism for which Flink derives max parallelism m (m one of
# derived_max_parallelism's values): 85 for 128, 171 for 256; every parallelism for 32768.
derived_up_to(m) := 32768 if {
	m == 32768
} else := max({2 * floor(m / 3), (2 * floor((m - 1) / 3)) + 1})

# exactly_once_sink_labels(contract): one label per job.sinks[] entry with delivery exactly_once,
# in declaration order, for messages and evidence: its name, or "job.sinks[i]" when it has none.
exactly_once_sink_labels(contract) := [label |
	some i, s in object.get(contract, ["job", "sinks"], [])
	s.delivery == "exactly_once"
	label := object.get(s, "name", sprintf("job.sinks[%d]", [i]))
]

# checkpointing_reasons(operators, sinks): why the pipeline must checkpoint (SW-CKPT-001,
# SW-CKPT-004), for messages, from the contract's state.operators and the labels of its
# exactly-once sinks (exactly_once_sink_labels): it keeps state, then it has exactly-once sinks;
# empty when neither holds. (The caller reads both from input.contract, where the contract
# reference's scan of the rules sees it read them.)
checkpointing_reasons(operators, sinks) := array.concat(
	[sprintf("it keeps state (%d operators under state.operators)", [count(operators)]) | count(operators) > 0],
	[sprintf("it has exactly-once sinks (%s)", [concat(", ", sinks)]) | count(sinks) > 0],
)

# exactly_once_sink_names(contract): the set of the names those sinks declare (null for a sink
# without one; several unnamed sinks are one null).
exactly_once_sink_names(contract) := {name |
	some s in object.get(contract, ["job", "sinks"], [])
	s.delivery == "exactly_once"
	name := object.get(s, "name", null)
}

# iceberg(inp): inp.facts.iceberg when the catalog gatherer read the table (available true);
# undefined otherwise, so every rule on live table facts is silent without them.
iceberg(inp) := inp.facts.iceberg if inp.facts.iceberg.available == true

# Helpers that receive one section of the input, never `input` itself: a function given the
# whole input may read input.now_ms as far as the result cache can tell (engine/timeread.py), and
# a static check that ran one would keep each contract's findings for that instant only.

# flink_job(fl): fl (input.facts.flink) when the Flink gatherer found the pipeline's job and read
# its details; undefined otherwise, so every rule on the running job is silent without them.
flink_job(fl) := fl if {
	fl.available == true
	fl.job_found == true
	fl.job.available == true
}

# gathered(section): a facts section (input.facts.savepoint, input.facts.data) when its gatherer
# read it (available true); undefined otherwise.
gathered(section) := section if section.available == true

# gate_severity: {"severity": "error"} in the gate (input.mode "gate", which fails closed on what
# a rule reports), {} elsewhere: object.union it into a finding whose rule warns otherwise.
gate_severity := {"severity": "error"} if {
	input.mode == "gate"
} else := {}

# flink_job_ref(fl): the running job for a message, with its state (fl: a flink_job):
# "RUNNING job orders (jid 4d986ca0…)".
flink_job_ref(fl) := sprintf("%s job %s (jid %s…)", [fl.job.state, fl.job_name, substring(fl.job_id, 0, 8)])

# data_table_name(d): the scanned table for a message (d: input.facts.data): "db.t (catalog lake)".
data_table_name(d) := sprintf("%v (catalog %v)", [d.table, d.catalog])

# iceberg_name(ice): the live table for a message: "db.table (catalog lake)".
iceberg_name(ice) := sprintf("%s (catalog %s)", [ice.identifier, ice.catalog])

# diff_base_doc(inp): inp.base when it is an object (a run with --base).
diff_base_doc(inp) := b if {
	b := object.get(inp, "base", null)
	is_object(b)
}

# diff_base(inp): the base branch's contract, when the base has one: status "present" (or absent)
# and an object contract. A contract the pull request adds ("added") or an unparseable base has none.
diff_base(inp) := c if {
	b := diff_base_doc(inp)
	object.get(b, "status", "present") == "present"
	c := object.get(b, "contract", null)
	is_object(c)
}

# diff_head(c): the pull request's contract c (input.contract) when it is an object (a removed
# pipeline has none).
diff_head(c) := c if is_object(c)

# list_at(c, path): the list at path in object c ([] when it is absent or not a list).
list_at(c, path) := xs if {
	xs := object.get(c, path, [])
	is_array(xs)
} else := []

# consumer_names(c): the names contract c declares under metadata.consumers[].name, in order
# (entries that are not objects or have no string name are skipped).
consumer_names(c) := [n |
	xs := object.get(c, ["metadata", "consumers"], [])
	is_array(xs)
	some x in xs
	is_object(x)
	n := object.get(x, "name", null)
	is_string(n)
]

# diff_base_name(inp): the base for a message: "the base (REF)", or "the base" without a ref.
diff_base_name(inp) := sprintf("the base (%s)", [r]) if {
	r := object.get(diff_base_doc(inp), "ref", null)
	is_string(r)
} else := "the base"

# source_margin(source): what a restore keeps in reserve of a job.sources[] entry's retention
# (SW-REC-006): its retention_margin, else a tenth of its retention, at least one hour. The
# margin covers what the savepoint's age alone does not show: the job's lag when the savepoint
# was taken (the records at its offsets are older than the savepoint), records whose timestamps
# are behind their arrival (Kafka expires by record timestamp), and the time from the decision
# to the source's first read.
source_margin(source) := source.retention_margin if {
	is_number(source.retention_margin)
} else := max([3600000, floor(source.retention / 10)]) if {
	is_number(source.retention)
}

# source_margin_text(source): how the margin was chosen, for a message.
source_margin_text(source) := sprintf("retention_margin %s", [fmt_ms(source.retention_margin)]) if {
	is_number(source.retention_margin)
} else := sprintf("a margin of %s (a tenth of its retention, at least 1h)", [fmt_age(source_margin(source))])

# source_label(source, idx): a job.sources[] entry for a message: its quoted name and index.
source_label(source, idx) := sprintf("source %s (job.sources[%d])", [quote(object.get(source, "name", null)), idx])
