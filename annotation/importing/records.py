"""What every reader produces: one plain record per document, before anything is stored."""

from dataclasses import dataclass, field


@dataclass
class DocumentRecord:
    external_id: str
    source: str
    sentences: list[str]
    units: list[str]
    summaries: dict[str, str] = field(default_factory=dict)
    # labels[system][annotator] = one 0/1 (or None: not judged) per unit, in unit order
    labels: dict[str, dict[str, list]] = field(default_factory=dict)
    # where the record came from, for error messages: (file, line)
    origin: tuple[str, int] = ("", 0)
    # the reference as given (without sentence tags): |r| is its word count, never the re-split's
    reference_text: str = ""
    # the dataset's length-normalization strength, as our RoSE export writes it (None: not given)
    length_alpha: float | None = None


# Annotator name for formats that carry one label set per summary with no worker id.
SINGLE_ANNOTATOR = "expert"
