"""Crowd work (above annotation): batches, HITs, workers, assignments, judgments, the ledger, services and providers."""
