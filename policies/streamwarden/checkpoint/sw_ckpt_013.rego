package streamwarden.checkpoint

import rego.v1

# METADATA
# custom:
#   requires: [facts.flink]

# METADATA
# title: The job must be running and stable
# description: |
#   Live Flink facts: fires when the pipeline's job is not RUNNING (created, restarting,
#   failing, failed, canceled, finished...), when no job with the contract's job.name exists on
#   the cluster, or when the running job has restarted more often than the contract tolerates
#   (checkpoint.health.max_restarts; job.restart_strategy none tolerates no restart). Restarts
#   since the job started come from the numRestarts job metric, else from the exception history.
# custom:
#   id: SW-CKPT-013
#   severity: warning
#   remediation: |
#     Check the job's exception history for why it stopped or restarts, fix the cause and
#     restore it from its latest retained checkpoint or savepoint.
#   example: |
#     job: {name: orders-enrichment, restart_strategy: none}
#     # cluster: job orders-enrichment is CANCELED
warn contains f if {
	state := _flink.job.state
	state != "running"
	f := {
		"rule": "SW-CKPT-013",
		"message": sprintf(
			"job %s (jid %s…) is %s, not running (from /jobs/%s)%s",
			[_flink.job_name, substring(_flink.job_id, 0, 8), upper(state), _flink.job_id, _flink_last_exception],
		),
		"path": "job.name",
		"source": "flink",
		"value": sprintf("flink:%s", [state]),
		"evidence": {"job_id": _flink.job_id, "state": state, "end_time": object.get(_flink.job, "end_time", null)},
	}
}

# SW-CKPT-013: no job with this name on the cluster
warn contains f if {
	fl := input.facts.flink
	fl.available == true
	fl.job_found == false
	similar := object.get(fl, "similar_jobs", [])
	f := {
		"rule": "SW-CKPT-013",
		"message": sprintf(
			"no job named %q on %s (from /jobs/overview), so it is not running%s",
			[fl.job_name, fl.rest_url, _flink_similar_text(similar)],
		),
		"path": "job.name",
		"source": "flink",
		"value": "flink:not-found",
		"evidence": {"job_name": fl.job_name, "rest_url": fl.rest_url, "similar_jobs": similar},
	}
}

# SW-CKPT-013: restarted more often than the contract tolerates
warn contains f if {
	_flink_running
	allowed := _flink_restarts_allowed
	restarts := _flink.restarts
	is_number(restarts)
	restarts > allowed
	f := {
		"rule": "SW-CKPT-013",
		"message": sprintf(
			"%s restarted %v times (from %s) but %s%s",
			[_flink_ref, restarts, _flink.restarts_source, _flink_restarts_rule[1], _flink_last_exception],
		),
		"path": _flink_restarts_rule[0],
		"source": "flink",
		"value": "flink:restarts",
		"evidence": {"job_id": _flink.job_id, "restarts": restarts, "allowed": allowed, "from": _flink.restarts_source},
	}
}
