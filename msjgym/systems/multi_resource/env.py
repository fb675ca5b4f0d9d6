"""This family's Gymnasium environments: none yet (the job-feature environment comes here)."""
ENVS: tuple = ()
