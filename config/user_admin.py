"""The users' admin: a lead who is not a superuser cannot raise privileges or touch a superuser."""

from django import forms
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from .usernames import lookalike_of, mixed_scripts_message

PRIVILEGED_FIELDS = ("is_superuser", "is_staff", "user_permissions")


class _NoLookalikes:
    """clean_username: the NFKC-folded name (the form's UsernameField folds it), refused when it
    mixes scripts or reads like another account (config/usernames.py)."""

    def clean_username(self):
        username = self.cleaned_data.get("username")
        if username:
            mixed = mixed_scripts_message(username)
            if mixed:
                raise forms.ValidationError(mixed)
            other = lookalike_of(username, exclude_pk=self.instance.pk)
            if other is not None:
                raise forms.ValidationError(f"The username {username!r} reads like the existing account {other!r}.")
        parent = getattr(super(), "clean_username", None)  # UserCreationForm's own check
        return parent() if parent else username


class UserAddForm(_NoLookalikes, AdminUserCreationForm):
    pass


class UserEditForm(_NoLookalikes, UserChangeForm):
    pass


class GuardedUserAdmin(UserAdmin):
    """UserAdmin where a lead who is not a superuser cannot raise anyone's privileges (their
    own included) nor touch a superuser's account or password. Usernames that read like another
    account's are refused (config/usernames.py), as on the People page."""

    add_form = UserAddForm
    form = UserEditForm

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
