"""REST API routes (filled in with the API)."""
urlpatterns: list = []
