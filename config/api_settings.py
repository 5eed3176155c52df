"""REST API settings (filled in with the API)."""
