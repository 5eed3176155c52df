"""The participant-panel provider: any panel that opens a study link with the participant's id
in a query parameter and takes participants back with a completion code or URL (CloudResearch
Connect, SONA, Qualtrics panels, a mailing list).

There is no API to call: publishing checks the options (and, paying per session, prices every
HIT alike so each session pays the same); approving, rejecting and bonusing are decided here by
the review services and paid by the lead at the panel from the downloaded lists (`payouts`), so
the ledger rows they write are marked "to pay at the panel".
"""

import re
from decimal import Decimal

from hits.models import HIT
from hits.provider_interface.base import Capability, CrowdProvider, ProviderError, alike_price
from hits.providers.panel import idle, selectors
from hits.providers.panel.config import ID_PARAMETER, OPTIONS, config


def check_options(batch) -> None:
    cfg = config(batch)
    if not re.fullmatch(ID_PARAMETER, cfg["id_parameter"]):
        raise ProviderError(
            f"The participant id parameter {cfg['id_parameter']!r} is not a query parameter name "
            "(letters, digits, _ . -; e.g. participantId, PROLIFIC_PID, id)."
        )
    for key, label in (("completion_url", "completion URL"), ("screened_out_url", "screened-out return URL")):
        if cfg[key] and not re.match(r"https?://[^\s/]+", cfg[key]):
            raise ProviderError(f"The {label} must be an http(s):// address ({cfg[key][:80]!r} given).")


def price_alike(batch) -> Decimal:
    """Paying per session, every HIT costs the mean of the batch's rewards rounded up to the
    cent, so a session of K tasks pays K times that (the panel's study reward)."""
    price = alike_price(batch.hits)
    HIT.objects.filter(batch=batch).exclude(reward=price).update(reward=price)
    return price


class PanelProvider(CrowdProvider):
    name = "panel"
    label = "Participant panel (study link)"
    capabilities = frozenset({Capability.STUDY_LINK})
    options = OPTIONS
    payment_note = "to pay at the panel"
    section_template = "hits/panel_section.html"

    def publish(self, batch) -> None:
        """Nothing to create anywhere: the lead pastes the study link into the panel."""
        check_options(batch)
        if config(batch)["pay_per"] == "session":
            price_alike(batch)

    def stop(self, batch) -> None:
        """New sessions stop with the batch status; the lead closes the study at the panel."""

    def approve(self, assignment) -> None:
        """Paid by the lead at the panel (approval or bonus list)."""

    def reject(self, assignment, feedback: str) -> None:
        """The lead rejects (or leaves unpaid) the participant at the panel."""

    def send_bonus(self, assignment, amount, reason: str, token: str, by=None) -> None:
        """Paid by the lead at the panel (bonus list)."""

    def block(self, worker, reason: str) -> None:
        """A blocked participant gets no further task here."""

    def release_idle(self) -> int:
        return idle.release_idle()

    def section(self, batch, base_url: str = "") -> dict:
        return selectors.section(batch, base_url)
