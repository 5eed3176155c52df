"""The admin site, open to leads (and superusers) only.

Leads browse everything; state changes of crowd work and money go through the services (admin
actions), never through edited fields. Only a superuser grants superuser or staff status or
changes a superuser's account or password.
"""

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig


class LeadAdminSite(admin.AdminSite):
    site_header = "ACU evaluation: lead admin"
    site_title = "ACU admin"

    def has_permission(self, request):
        from config.roles import LEAD, has_role

        return request.user.is_active and has_role(request.user, LEAD)


class ReadOnlyAdmin(admin.ModelAdmin):
    """View only: rows are written by the services."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LeadAdminConfig(AdminConfig):
    default_site = "config.admin.LeadAdminSite"

    def ready(self):
        super().ready()  # autodiscovers the apps' admin modules
        from django.contrib import admin as django_admin
        from django.contrib.auth import get_user_model

        from config.user_admin import GuardedUserAdmin

        user = get_user_model()
        if django_admin.site.is_registered(user):
            django_admin.site.unregister(user)
        django_admin.site.register(user, GuardedUserAdmin)
