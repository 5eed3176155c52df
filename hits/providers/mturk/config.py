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
    # The default grades on our pages, where a worker fails only when gold shows it with a
    # confidence bound (hits.qualification_bound); MTurk's AnswerKey fails on a point score alone.
    Option(
        "qualification_mode",
        "choice",
        "our_pages",
        "qualification test",
        choices=(
            ("our_pages", "Workers take the test on our pages; we grant the qualification"),
            ("mturk_test", "MTurk grades the test (QuestionForm + AnswerKey): a point score, no confidence bound"),
        ),
        help=(
            "On our pages a worker fails only when gold shows them below the pass score with 95% "
            "confidence (else one more sheet). MTurk's own grading compares a plain share right on one "
            "fixed sheet with the pass score: it fails workers on a point score alone; choose it only "
            "knowingly."
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
