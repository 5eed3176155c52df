"""A panel batch's options (one schema: the lead's form, the API and the stored defaults)."""

from django.conf import settings
from django.utils.crypto import salted_hmac

from hits.provider_interface.options import Option, defaults, merged

OPTIONS: tuple[Option, ...] = (
    Option("panel_name", "text", "", "panel name", help="Free text, e.g. CloudResearch Connect, SONA, Qualtrics."),
    Option(
        "id_parameter",
        "text",
        "participantId",
        "participant id parameter",
        help="The query parameter the panel fills with the participant's id (participantId, PROLIFIC_PID, id).",
    ),
    Option(
        "completion_code",
        "text",
        "",
        "completion code",
        help="The start of each participant's own code (shown after the last task). Empty: C.",
    ),
    Option(
        "completion_url",
        "text",
        "",
        "completion URL",
        max_length=500,
        help="Where participants are sent after the last task ({code} is replaced by the code). Empty: code only.",
    ),
    Option("tasks_per_session", "int", 5, "tasks per session", min=1, max=50),
    Option(
        "pay_per",
        "choice",
        "session",
        "pay per",
        choices=(("session", "Session (the panel's study reward)"), ("hit", "HIT (a bonus per participant)")),
        help="Session: every HIT is priced alike and the panel pays tasks x price per approved participant.",
    ),
    Option(
        "signature_secret",
        "text",
        "",
        "signing secret",
        max_length=128,
        help="Optional: a secret shared with what makes the participants' links (Qualtrics and Connect sign no "
        "links themselves: a Qualtrics Web Service element can, see docs/providers.md); only links whose "
        "signature parameter is the hex HMAC-SHA256 of the participant id under it are let in.",
    ),
    Option(
        "signature_parameter",
        "text",
        "sig",
        "signature parameter",
        help="The query parameter that carries the signature (with a signing secret).",
    ),
    Option(
        "sessions_per_network",
        "int",
        None,
        "new sessions per network per hour",
        min=0,
        max=100_000,
        optional=True,
        help="New sessions of this study one network (address) may start in an hour, a bound on one person "
        "posing as many. Empty: the site's (PANEL_SESSIONS_PER_ADDRESS, 3 unless set); 0: no bound. Raise it "
        "when participants share a network, as in a lab room or on a campus.",
    ),
    Option(
        "screened_out_url",
        "text",
        "",
        "return URL for screened-out participants",
        max_length=500,
        help="Optional: where a participant who fails the screening test is sent.",
    ),
)
DEFAULT_CONFIG = defaults(OPTIONS)

ID_PARAMETER = r"[A-Za-z_][A-Za-z0-9_.\-]{0,39}"
# A participant id never begins with = + - @ (a spreadsheet would run it as a formula).
PARTICIPANT_ID = r"[A-Za-z0-9_.:][A-Za-z0-9_.@:+\-]{0,63}"


def sessions_per_network(batch) -> int:
    """The batch's bound on new sessions from one address in PANEL_ADDRESS_WINDOW seconds (0: none):
    its own option, else the site's PANEL_SESSIONS_PER_ADDRESS."""
    bound = config(batch)["sessions_per_network"]
    return settings.PANEL_SESSIONS_PER_ADDRESS if bound is None else bound


def config(batch) -> dict:
    cfg = merged(OPTIONS, batch.provider_config)
    cfg["id_parameter"] = cfg["id_parameter"] or "participantId"
    return cfg


def completion_code(batch, participant_id: str) -> str:
    """The participant's own code: the lead's prefix and a digest of the batch and the id under
    the site's secret (stable, unguessable), so a code passed on names whom it was made for and
    is refused for anyone else when the lead marks the lists paid."""
    digest = salted_hmac("hits.panel.code", f"{batch.pk}:{participant_id}").hexdigest()[:10].upper()
    prefix = config(batch)["completion_code"]
    return f"{prefix}-{digest}" if prefix else f"C{digest}"


def completion_url(batch, participant_id: str) -> str:
    url = config(batch)["completion_url"]
    return url.replace("{code}", completion_code(batch, participant_id)) if url else ""
