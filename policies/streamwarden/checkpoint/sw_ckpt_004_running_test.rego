package streamwarden.checkpoint

import rego.v1

test_jobmanager_storage_fires_004 if {
	inp := _tr_input(object.union(_tr_cfg, {"checkpoint_storage": "JobManagerCheckpointStorage"}), "running")
	some f in deny with input as inp
	f.rule == "SW-CKPT-004"
	f.path == "checkpoint.storage"
}
