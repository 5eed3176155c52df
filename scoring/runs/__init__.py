"""Scoring runs: reading judgments, computing with the numerical core, storing and recomputing runs."""
