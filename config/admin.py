"""The admin site, open to leads (and superusers) only."""
from django.contrib import admin
from django.contrib.admin.apps import AdminConfig


class LeadAdminSite(admin.AdminSite):
    site_header = "ACU evaluation: lead admin"
    site_title = "ACU admin"

    def has_permission(self, request):
        from config.roles import LEAD, has_role

        return request.user.is_active and has_role(request.user, LEAD)


class LeadAdminConfig(AdminConfig):
    default_site = "config.admin.LeadAdminSite"
