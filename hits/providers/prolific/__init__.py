"""hits/providers/prolific."""
