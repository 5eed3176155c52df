"""hits/services."""
