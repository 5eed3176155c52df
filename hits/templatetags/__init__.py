"""Template filters of the crowd app (money)."""
