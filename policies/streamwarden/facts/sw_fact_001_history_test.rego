package streamwarden.facts

import rego.v1

_h_input(history, mode) := {
	"contract": {"table": {"catalog": "lake", "identifier": "sales.orders"}},
	"facts": {"iceberg": {"available": true, "configured": true, "catalog": "lake", "identifier": "sales.orders", "history": history}},
	"mode": mode,
}

test_fact001_history_unreadable_warns if {
	inp := _h_input({"available": false, "error": "1 previous metadata file(s) could not be read"}, "check")
	w := warn with input as inp
	[f] := [x | some x in w; x.path == "facts.iceberg.history"]
	f.rule == "SW-FACT-001"
	f.message == "iceberg facts history of sales.orders (catalog lake) could not be gathered: 1 previous metadata file(s) could not be read; rules that need them were not evaluated"
	object.get(f, "severity", null) == null
	f.value == "iceberg.history"
}

test_fact001_history_unreadable_is_an_error_in_the_gate if {
	inp := _h_input({"available": false}, "gate")
	w := warn with input as inp
	[f] := [x | some x in w; x.path == "facts.iceberg.history"]
	f.severity == "error"
	contains(f.message, "no error was reported")
}

test_fact001_history_read_is_silent if {
	inp := _h_input({"available": true, "error": null, "changes": []}, "check")
	w := warn with input as inp
	count([x | some x in w; x.path == "facts.iceberg.history"]) == 0
}

test_fact001_history_absent_is_silent if {
	inp := json.remove(_h_input({}, "check"), ["facts/iceberg/history"])
	w := warn with input as inp
	count([x | some x in w; x.path == "facts.iceberg.history"]) == 0
}
