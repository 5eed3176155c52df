"""Machine judges: the judges, judge runs (machine rounds), their pages and API, machine QC and triage scores."""
