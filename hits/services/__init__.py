"""The crowd side's writes: batches, handout, submission, review and the mirror of provider
decisions, provider sync, qualification, simulation, people and dataset import. Views, API
views, tasks and commands call these; provider adapters never do."""
