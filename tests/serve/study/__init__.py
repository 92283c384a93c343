"""Studies: the study file, its plan, participants and the report."""
