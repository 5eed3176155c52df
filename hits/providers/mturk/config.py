"""MTurk's batch options (one schema: the lead's form, the API and the stored defaults)."""

from hits.provider_interface.options import Option, defaults, merged

OPTIONS: tuple[Option, ...] = (
    Option("sandbox", "bool", True, "use the sandbox", help="Workers' sandbox: nobody is paid."),
    Option(
        "locales",
        "codes",
        ("US", "GB"),
        "worker countries",
        pattern=r"[A-Za-z]{2}",
        upper=True,
        invalid="Use a two-letter country code.",
        help="Comma-separated ISO codes; empty for any country.",
    ),
    Option("min_approval_rate", "int", 98, "minimum approval rate (%)", min=0, max=100),
    Option("min_approved_hits", "int", 10000, "minimum approved HITs", min=0, max=10**9),
    Option(
        "qualification_mode",
        "choice",
        "mturk_test",
        "qualification test",
        choices=(
            ("mturk_test", "MTurk grades the test (QuestionForm + AnswerKey)"),
            ("our_pages", "Workers take the test on our pages; we grant the qualification"),
        ),
    ),
    Option(
        "keywords",
        "text",
        "summarization, fact checking, reading, text",
        "keywords",
        max_length=1000,
        help="Shown to workers searching for HITs.",
    ),
)
DEFAULT_CONFIG = defaults(OPTIONS)


def config(batch) -> dict:
    return merged(OPTIONS, batch.provider_config)
