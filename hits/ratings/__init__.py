"""Rating batches (RoSE §5): one HIT per example, every summary of it rated 1 (worst) to 5 (best)
under one protocol, on the same handout, submission, review, pay and ledger as ACU work.

`Batch.protocol` makes a batch a rating batch; what each protocol shows, hides and asks is here,
once: the task page (hits.task_page), the submission (hits.services.submission) and the batch
form read it.
"""

from dataclasses import dataclass

PRIOR, REF_FREE, REF_BASED = "prior", "ref_free", "ref_based"
ACU = "acu"  # the batch kind field's value for an ACU batch (Batch.protocol empty)
SCORES = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class Protocol:
    name: str
    label: str
    shows: str  # "" (nothing but the summaries), "document" or "reference"
    question: str  # the task page's heading
    instructions: str  # RoSE's wording (Liu et al., 2023, §5), the default of a batch's instructions


PROTOCOLS = {
    p.name: p
    for p in (
        Protocol(
            PRIOR,
            "Prior",
            "",
            "How good is each summary?",
            "Imagine each of the candidate summaries to be a summary of a longer news article. "
            "How good do you think this summary is? Rate each summary from 1 (worst) to 5 (best).",
        ),
        Protocol(
            REF_FREE,
            "Ref-free",
            "document",
            "How well does each summary capture the article?",
            "Read the article. Rate how well each summary captures the key points of the article: consider "
            "whether all and only the important aspects are contained in the summary. 1 is worst, 5 is best.",
        ),
        Protocol(
            REF_BASED,
            "Ref-based",
            "reference",
            "How similar is each summary to the reference?",
            "Read the reference summary. Rate how similar each summary is to it: similar information, not the "
            "same words. 1 is worst (nothing in common), 5 is best (the same information).",
        ),
    )
}

# The batch form's and the API's choice: an ACU batch or one of the protocols.
KINDS = (ACU, *PROTOCOLS)

MAX_INSTRUCTIONS = 4000


def instructions(batch) -> str:
    """The batch's instructions: the lead's own, or its protocol's default."""
    return batch.instructions or PROTOCOLS[batch.protocol].instructions
