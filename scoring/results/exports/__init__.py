"""Exports: RoSE JSONL (rose) and CSV tables of judgments and scores (tables)."""
