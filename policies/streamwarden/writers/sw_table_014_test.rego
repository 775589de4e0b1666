package streamwarden.writers

import rego.v1

import data.streamwarden.lib

# A writer of sales.orders as writers.py builds it; `extra` overrides its fields.
_w(name, extra) := object.union(
	{
		"pipeline": name,
		"file": sprintf("contracts/%s.yaml", [name]),
		"tables": [{"table": "sales.orders", "path": "job.sinks[0].table", "line": 9}],
		"owns": null,
		"fork_of": null,
		"fork_of_line": null,
		"fork_of_pipeline_line": null,
		"base": null,
	},
	extra,
)

_owner := _w("orders", {"owns": "sales.orders", "tables": [
	{"table": "sales.orders", "path": "job.sinks[0].table", "line": 12},
	{"table": "sales.orders", "path": "table.identifier", "line": 40},
]})

_fork := {
	"pipeline": "orders",
	"kind": "backfill",
	"branch": "backfill-2025q3",
	"range": {"column": "event_time", "from": "2025-07-01T00:00:00Z", "to": "2025-10-01T00:00:00Z"},
}

_doc(writers, base_ref) := {"writers": {"tables": [{"table": "sales.orders", "writers": writers}], "base_ref": base_ref}, "now_ms": 1, "mode": "writers"}

_msgs(findings) := {f.pipeline: f.message | some f in findings}

test_a_second_writer_without_fork_of_fires_on_its_sink if {
	findings := deny with input as _doc([_owner, _w("orders-replay", {})], null)
	count(findings) == 1
	some f in findings
	f.rule == "SW-TABLE-014"
	f.pipeline == "orders-replay"
	f.file == "contracts/orders-replay.yaml"
	f.line == 9
	f.path == "job.sinks[0].table"
	f.message == `pipeline "orders-replay" writes table sales.orders (job.sinks[0].table), which pipeline "orders" owns, without declaring itself a backfill or fork of it: one contract owns a table; declare fork_of with the owner, a branch or WAP id and a from/to range, or write another table`
	f.evidence == {"table": "sales.orders", "owners": ["orders"], "owner_count": 1, "writers": ["orders", "orders-replay"], "writer_count": 2}
	f.value == {"table": "sales.orders", "pipeline": "orders-replay"}
}

test_a_bounded_fork_of_the_owner_passes if {
	findings := deny with input as _doc([_owner, _w("orders-backfill", {"fork_of": _fork, "fork_of_line": 20})], null)
	count(findings) == 0
}

test_a_wap_id_is_a_boundary_too if {
	fork := object.union(json.remove(_fork, ["branch"]), {"wap_id": "replay-42"})
	findings := deny with input as _doc([_owner, _w("orders-backfill", {"fork_of": fork, "fork_of_line": 20})], null)
	count(findings) == 0
}

test_a_fork_without_boundary_names_what_is_missing if {
	fork := json.remove(_fork, ["branch", "range"])
	findings := deny with input as _doc([_owner, _w("orders-backfill", {"fork_of": fork, "fork_of_line": 20})], null)
	count(findings) == 1
	some f in findings
	f.path == "fork_of"
	f.line == 20
	f.message == `backfill "orders-backfill" writes table sales.orders of pipeline "orders" without a boundary: it has no branch or WAP id (branch, wap_id) and no from/to range (range); its commits cannot be told apart from the owner's`
	f.evidence.missing == ["branch or WAP id (branch, wap_id)", "from/to range (range)"]
}

test_a_fork_with_a_branch_but_no_range if {
	fork := json.remove(_fork, ["range"])
	findings := deny with input as _doc([_owner, _w("orders-backfill", {"fork_of": fork, "fork_of_line": 20})], null)
	{f.evidence.missing | some f in findings} == {["from/to range (range)"]}
}

test_a_blank_branch_is_no_boundary if {
	fork := object.union(_fork, {"branch": "  "})
	findings := deny with input as _doc([_owner, _w("orders-backfill", {"fork_of": fork, "fork_of_line": 20})], null)
	{f.evidence.missing | some f in findings} == {["branch or WAP id (branch, wap_id)"]}
}

test_a_fork_of_a_pipeline_that_does_not_own_the_table if {
	fork := object.union(_fork, {"pipeline": "payments"})
	findings := deny with input as _doc([_owner, _w("orders-backfill", {"fork_of": fork, "fork_of_line": 20, "fork_of_pipeline_line": 21})], null)
	count(findings) == 1
	some f in findings
	f.path == "fork_of.pipeline"
	f.line == 21
	f.message == `fork_of names pipeline "payments", but table sales.orders belongs to "orders": a backfill or fork declares the table's owner`
}

test_forks_without_an_owner if {
	a := _w("a", {"fork_of": object.union(_fork, {"pipeline": "gone"}), "fork_of_line": 3})
	b := _w("b", {"fork_of": object.union(_fork, {"pipeline": "gone"}), "fork_of_line": 3})
	findings := deny with input as _doc([a, b], null)
	{f.pipeline | some f in findings} == {"a", "b"}
	some f in findings
	contains(f.message, "belongs to no contract that writes it without fork_of")
}

test_the_table_contract_owns_it_over_a_sink_only_writer if {
	# the replay is listed first: the owner is the one declaring table.identifier, not the first
	findings := deny with input as _doc([_w("orders-replay", {}), _owner], null)
	{f.pipeline | some f in findings} == {"orders-replay"}
}

test_writers_that_tie_each_fire if {
	a := _w("a", {"owns": "sales.orders"})
	b := _w("b", {"owns": "sales.orders"})
	c := _w("c", {})
	findings := deny with input as _doc([a, b, c], null)
	msgs := _msgs(findings)
	msgs.a == `pipeline "a" writes table sales.orders (job.sinks[0].table) without fork_of, and so does pipeline "b" (no contract can be told its owner): one contract owns a table; declare fork_of with the owner, a branch or WAP id and a from/to range, or write another table`
	contains(msgs.b, `without fork_of, and so does pipeline "a" (no contract can be told its owner)`)
	contains(msgs.c, `which pipelines "a", "b" write without fork_of, without declaring itself a backfill or fork of one:`)
}

test_in_a_pull_request_the_newcomer_is_the_second_writer if {
	# both declare the table's contract; "orders" wrote it at the base, "orders-v2" is new
	old := object.union(_owner, {"base": {"status": "present", "tables": ["sales.orders"], "fork_of": null}})
	new := _w("orders-v2", {"owns": "sales.orders", "base": {"status": "added", "tables": [], "fork_of": null}})
	findings := deny with input as _doc([new, old], "main")
	{f.pipeline | some f in findings} == {"orders-v2"}
	some f in findings
	contains(f.message, `which pipeline "orders" owns`)
}

test_in_a_pull_request_a_contract_that_starts_writing_the_table_is_the_second if {
	old := object.union(_owner, {"base": {"status": "present", "tables": ["sales.orders"], "fork_of": null}})
	moved := _w("payments", {"owns": "sales.orders", "base": {"status": "present", "tables": ["sales.payments"], "fork_of": null}})
	findings := deny with input as _doc([old, moved], "main")
	{f.pipeline | some f in findings} == {"payments"}
}

test_a_base_fork_is_no_claim_to_own if {
	# "orders-backfill" was a declared fork at the base and drops fork_of in the pull request
	old := object.union(_owner, {"base": {"status": "present", "tables": ["sales.orders"], "fork_of": null}})
	was_fork := _w("orders-backfill", {"base": {"status": "present", "tables": ["sales.orders"], "fork_of": _fork}})
	findings := deny with input as _doc([old, was_fork], "main")
	{f.pipeline | some f in findings} == {"orders-backfill"}
}

test_base_facts_count_only_in_a_pull_request if {
	# a base part without base_ref (never built so, but the rule must not read it then)
	a := _w("a", {"owns": "sales.orders", "base": {"status": "present", "tables": ["sales.orders"], "fork_of": null}})
	b := _w("b", {"owns": "sales.orders", "base": {"status": "added", "tables": [], "fork_of": null}})
	findings := deny with input as _doc([a, b], null)
	{f.pipeline | some f in findings} == {"a", "b"}
}

test_silent_on_other_documents if {
	count(deny) == 0 with input as lib.example_input
	count(deny) == 0 with input as {"writers": {"tables": [], "base_ref": null}, "mode": "writers"}
}

test_a_table_with_many_writers_is_summed_up if {
	# 30 contracts declaring the same table, none at the base: each fires, naming five others
	ws := [_w(sprintf("p%02d", [n]), {"owns": "sales.orders"}) | some n in numbers.range(0, 29)]
	findings := deny with input as _doc(ws, null)
	count(findings) == 30
	msgs := _msgs(findings)
	contains(msgs.p00, `and so do pipelines "p01", "p02", "p03", "p04", "p05" and 24 more (no contract can be told its owner)`)
	some f in findings
	f.pipeline == "p07"
	f.evidence.owner_count == 30
	count(f.evidence.owners) == 20
	f.evidence.writer_count == 30
}
