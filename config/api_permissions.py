"""Who may use the REST API: leads (superusers count as leads), nobody else."""

from rest_framework.permissions import BasePermission

from config.roles import LEAD, has_role


class IsLead(BasePermission):
    """Anonymous requests get 401 (DRF, as the token authenticator asks for credentials);
    signed-in authors, workers and users without a role get 403 with this message."""

    message = "The REST API is for leads only; your account does not have the lead role."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.is_active and has_role(user, LEAD))
