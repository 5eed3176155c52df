"""What every reader produces: one plain record per document, before anything is stored."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LabelSource:
    """Where one annotator's labels of a summary came from, as our export writes it: the round
    (`kind`: `imported` expert labels, an `expert` round, a `crowd` round), its name, the
    worker's provider and id (an expert's name) and the active seconds (None: not known)."""

    kind: str
    round: str
    provider: str
    worker: str
    seconds: float | None = None
    # The worker's gold record on this work, (correct, total) (None: no gold shown), and their
    # state where the labels were made: blocked (with the lead's reason) and excluded.
    gold: tuple[int, int] | None = None
    blocked: bool = False
    block_reason: str = ""
    excluded: bool = False

    @property
    def expert(self) -> bool:
        return self.kind in EXPERT_SOURCES


@dataclass(frozen=True)
class UncountedLabels:
    """Labels that count nowhere, as our export writes them (`uncounted_labels`): work the lead
    rejected (`status` "rejected", with the `feedback` the worker was given), or the work of a
    worker the lead excluded ("approved"); kept so that the workers table shows the evidence."""

    labels: list
    source: LabelSource
    status: str
    feedback: str = ""


# The review states of uncounted labels: rejected work, or an excluded worker's approved work.
UNCOUNTED_STATUSES = ("rejected", "approved")

# The kinds of label source whose labels are expert labels (the gold); `crowd` is the other one.
EXPERT_SOURCES = ("imported", "expert")
SOURCE_KINDS = (*EXPERT_SOURCES, "crowd")


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
    # sources[system][annotator]: where those labels came from (our export's label_sources; an
    # annotator not named here gave imported expert labels)
    sources: dict[str, dict[str, LabelSource]] = field(default_factory=dict)
    # uncounted[system]: labels that count nowhere (rejected work, excluded workers' work)
    uncounted: dict[str, list[UncountedLabels]] = field(default_factory=dict)
    # the sentence (index in `sentences`) of each unit, as our RoSE export writes it (None: not
    # given, each unit goes to the sentence it shares most content words with)
    unit_sentences: list[int] | None = None
    # whether the units were proofread and approved (our export's `reference_approved`; a file
    # without it: its units are approved ACUs)
    approved: bool = True


# Annotator name for formats that carry one label set per summary with no worker id.
SINGLE_ANNOTATOR = "expert"
