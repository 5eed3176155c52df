"""Pagination of every API list: `?page=N` (from 1) and `?page_size=N` (up to a maximum)."""

from django.conf import settings
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination


class PageQuery(serializers.Serializer):
    """The paging parameters as the schema states them: whole numbers from 1 (a page_size over the
    maximum is cut to it, as documented; anything else is a 400 naming the parameter)."""

    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, required=False)


class LeadPagination(PageNumberPagination):
    """`{"count", "next", "previous", "results"}`; 50 items a page unless `page_size` asks for
    another size (at most API_MAX_PAGE_SIZE). A page past the end is a 404 JSON error."""

    page_size_query_param = "page_size"

    @property
    def max_page_size(self) -> int:
        return settings.API_MAX_PAGE_SIZE

    def paginate_queryset(self, queryset, request, view=None):
        query = PageQuery(data={k: v for k, v in request.query_params.items() if k in PageQuery().fields})
        query.is_valid(raise_exception=True)
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": self.page_query_param,
                "required": False,
                "in": "query",
                "description": "A page number, from 1 (past the last page: 404).",
                "schema": {"type": "integer", "minimum": 1},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": f"Items a page, from 1 (above API_MAX_PAGE_SIZE, default {settings.API_MAX_PAGE_SIZE}: "
                "that many).",
                "schema": {"type": "integer", "minimum": 1},
            },
        ]
