package streamwarden.checkpoint

import rego.v1

import data.streamwarden.lib

# METADATA
# custom:
#   requires: [facts.flink]

warn contains f if {
	some section in _flink_needed_sections
	s := _flink[section]
	s.available == false
	f := object.union(
		{
			"rule": "SW-FACT-001",
			"message": sprintf(
				"flink facts %s of job %s (jid %s…) could not be gathered: %s; rules that need them were not evaluated",
				[section, _flink.job_name, substring(_flink.job_id, 0, 8), object.get(s, "error", "no error was reported")],
			),
			"path": sprintf("facts.flink.%s", [section]),
			"value": sprintf("flink.%s", [section]),
			"source": "flink",
			"evidence": {"source": "flink", "section": section, "error": object.get(s, "error", null)},
		},
		lib.gate_severity,
	)
}
