"""hits/providers/mturk."""
