"""Machine ACU drafts measured against human ACUs: draft quality, the draft report, the human-unit budget."""
