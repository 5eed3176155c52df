"""Exports: RoSE JSONL (rose), CSV tables of judgments and scores (tables) and a scoring run as
JSON (scores_json)."""
