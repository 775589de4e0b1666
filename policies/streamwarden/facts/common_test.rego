package streamwarden.facts

import rego.v1

_t_quiet := {"available": false, "configured": false}

_t_ok := {"available": true, "configured": true}

_t_broken := {"available": false, "configured": true, "error": "GET /jobs/overview: connection refused"}

_t_facts(flink) := {
	"deployment": _t_ok,
	"flink": flink,
	"iceberg": _t_quiet,
	"data": _t_quiet,
	"savepoint": _t_quiet,
}

# ---------------------------------------------------------------- SW-FACT-001: missing job.deployment files

_t_missing_b := {"index": 1, "entry": "deploy/missing.yaml", "file": "contracts/deploy/missing.yaml"}

_t_deploy_contract(entries) := {"job": {"name": "j", "deployment": entries}}

_t_deploy_facts(deployment) := object.union(_t_facts(_t_quiet), {"deployment": deployment})

# ---------------------------------------------------------------- SW-FACT-001: unreadable job.deployment files

_t_unreadable_a := {"index": 0, "entry": "../x.yaml", "file": "../x.yaml", "error": "../x.yaml is outside the repository; deployment files must live in the repository"}

# ---------------------------------------------------------------- SW-FACT-002

_t_refused := {"available": false, "configured": true, "refused": true, "error": "no entry of iceberg.allow grants lake.sales.orders to owner 'web-analytics'"}

_t_access(allowed, field) := {
	"allowed": allowed, "catalog": "lake", "table": "sales.orders", "owner": "web-analytics",
	"field": field, "reason": "no entry of iceberg.allow grants lake.sales.orders to owner 'web-analytics'",
	"grant": null,
}

# ---------------------------------------------------------------- helpers of this package's rules

test_access_path_points_at_the_field_that_failed_or_the_identifier if {
	_access_path({"field": "table.catalog"}) == "table.catalog"
	_access_path({"field": "table.identifier"}) == "table.identifier"
	_access_path({"field": "job.name"}) == "table.identifier"
	_access_path({}) == "table.identifier"
}

test_error_text_never_leaves_the_message_blank if {
	_error_text("connection refused") == "connection refused"
	_error_text("  ") == "no error was reported"
	_error_text(null) == "no error was reported"
}
