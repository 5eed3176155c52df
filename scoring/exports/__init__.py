"""scoring/exports."""
