"""The users' admin: a lead who is not a superuser cannot raise privileges or touch a superuser."""

from django.contrib.auth.admin import UserAdmin

PRIVILEGED_FIELDS = ("is_superuser", "is_staff", "user_permissions")


class GuardedUserAdmin(UserAdmin):
    """UserAdmin where a lead who is not a superuser cannot raise anyone's privileges (their
    own included) nor touch a superuser's account or password."""

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        return fields if request.user.is_superuser else (*fields, *PRIVILEGED_FIELDS)

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False  # also guards the password change form (it asks this)
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request, obj, form, change):
        if not request.user.is_superuser:
            if change:  # a read-only field cannot be posted, but keep the stored values whatever arrives
                stored = type(obj).objects.get(pk=obj.pk)
                obj.is_superuser, obj.is_staff = stored.is_superuser, stored.is_staff
            else:
                obj.is_superuser = False
        super().save_model(request, obj, form, change)
