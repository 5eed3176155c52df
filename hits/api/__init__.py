"""The crowd side's REST API: datasets (import, list, detail), batches; routes in `urls`."""
