"""Prolific's batch options (one schema: the lead's form, the API and the stored defaults)."""

from hits.provider_interface.options import Option, defaults, merged

OPTIONS: tuple[Option, ...] = (
    Option(
        "hits_per_session",
        "int",
        None,
        "HITs per session (K)",
        min=1,
        max=50,
        optional=True,
        help="Empty: as many as fit the session minutes.",
    ),
    Option("session_minutes", "int", 10, "session minutes", min=2, max=120),
    Option("currency", "choice", "USD", "account currency", choices=(("USD", "USD"), ("GBP", "GBP"))),
    Option("min_approval_rate", "int", 95, "minimum approval rate (%)", min=0, max=100),
    Option(
        "languages",
        "codes",
        ("19",),
        "fluent-languages choice ids",
        pattern=r"[A-Za-z0-9]{1,20}",
        max_items=50,
        help="Comma-separated ids from Prolific's filter list (19: English).",
    ),
    Option(
        "device_compatibility",
        "choices",
        ("desktop",),
        "devices",
        form_name="prolific_devices",
        choices=(("desktop", "Desktop"), ("tablet", "Tablet"), ("mobile", "Mobile")),
    ),
    Option(
        "workspace_id", "text", "", "workspace id", help="Needed with a qualification test (its participant group)."
    ),
    Option("project_id", "text", "", "project id"),
    Option("participant_group_id", "text", "", "participant group id", form_name="prolific_group_id"),
    Option(
        "participant_group_mode",
        "choice",
        "allow",
        "use the group as",
        form_name="prolific_group_mode",
        choices=(("allow", "Allow-list"), ("block", "Block-list")),
    ),
    Option("screening_minutes", "int", 5, "screening study minutes", min=1, max=60),
    Option(
        "screening_places",
        "int",
        None,
        "screening study places",
        min=1,
        max=100000,
        optional=True,
        help="Empty: as many as the main study.",
    ),
)
DEFAULT_CONFIG = defaults(OPTIONS)


def config(batch) -> dict:
    return merged(OPTIONS, batch.provider_config)
