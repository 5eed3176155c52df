"""Pagination of every API list: `?page=N` (from 1) and `?page_size=N` (up to a maximum)."""

from django.conf import settings
from rest_framework.pagination import PageNumberPagination


class LeadPagination(PageNumberPagination):
    """`{"count", "next", "previous", "results"}`; 50 items a page unless `page_size` asks for
    another size (at most API_MAX_PAGE_SIZE). A page past the end is a 404 JSON error."""

    page_size_query_param = "page_size"

    @property
    def max_page_size(self) -> int:
        return settings.API_MAX_PAGE_SIZE
