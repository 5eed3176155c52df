"""What the batch page shows for a panel batch (reads only): the study link, sessions, lists."""

from django.conf import settings
from django.urls import reverse

from hits.models import Assignment
from hits.provider_interface.base import alike_price
from hits.providers.panel import payouts, tokens
from hits.providers.panel.config import completion_code, completion_url, config
from hits.providers.panel.models import PanelSession

DONE = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED)


def study_link(batch, base_url: str = "") -> str:
    """The link to paste into the panel; it ends with the id parameter, to which the panel's
    placeholder is appended (e.g. %SURVEY_CODE% on SONA)."""
    base = (settings.PUBLIC_BASE_URL or base_url).rstrip("/")
    path = reverse("panel_entry", args=[batch.pk])
    return f"{base}{path}?e={tokens.entry_token(batch.pk)}&{config(batch)['id_parameter']}="


def section(batch, base_url: str = "") -> dict:
    cfg = config(batch)
    rows = []
    for s in batch.panel_sessions.select_related("worker").order_by("-created_at")[:300]:
        answered = s.assignments().filter(status__in=DONE).count()
        rows.append({"session": s, "done": answered, "total": s.size})
    price = alike_price(batch.hits)  # as publishing prices them
    return {
        "cfg": cfg,
        "link": study_link(batch, base_url),
        "test_id": f"TEST-{batch.pk}",
        "code": completion_code(batch, f"TEST-{batch.pk}"),
        "completion_url": completion_url(batch, f"TEST-{batch.pk}"),
        "session_pay": price * int(cfg["tasks_per_session"]) if cfg["pay_per"] == "session" else None,
        "sessions": rows,
        "listed": cfg.get("allowed_ids") or [],
        "signed": bool(cfg.get("signature_secret")),
        "counts": {
            status.label: batch.panel_sessions.filter(status=status.value).count() for status in PanelSession.Status
        },
        "lists": payouts.lists(batch),
        "paid": payouts.paid_total(batch),
    }
