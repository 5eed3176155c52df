"""Stored scoring runs (filled in by the scoring engine)."""
