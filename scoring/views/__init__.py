"""scoring/views."""
