package streamwarden.table

import rego.v1

test_table009_same_job_goes_backwards if {
	inp := _t_lineage({"backwards": [_t_back("same_job", ice_job_b)]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-009")
	f.evidence.checkpoint_id == 8
	f.evidence.previous_checkpoint_id == 12
	contains(f.message, "committed checkpoint 8 (snapshot 5003) after checkpoint 12 (snapshot 5002)")
}

test_table009_new_job_restored_from_older_checkpoint if {
	inp := _t_lineage({"backwards": [_t_back("new_job", ice_job_a)]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-009")
	f.evidence.previous_job_id == ice_job_a
	contains(f.message, "took over operator")
	contains(f.message, "(a restore under a new job id, not a fork: job a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1 committed nothing after it), checkpoints 8..12 may be replayed")
}

test_table009_new_job_recommits_the_last_checkpoint_of_its_predecessor if {
	recommit := object.union(_t_back("new_job", ice_job_a), {"checkpoint_id": 12})
	inp := _t_lineage({"backwards": [recommit]})
	findings := deny with input as inp
	[f] := ice_rules(findings, "SW-TABLE-009")
	f.evidence.checkpoint_id == 12
	f.evidence.previous_checkpoint_id == 12
	contains(f.message, "committed checkpoint 12 again (snapshot 5003) when it took over operator")
	contains(f.message, "re-committed its predecessor's last checkpoint under the new job id")
	not contains(f.message, "restored from an older checkpoint")
}
