"""The draft report: drafts of a dataset against its human ACUs, the Lite2.x criterion and the budget curve.

Reads the dataset, runs a drafter on every reference sentence and a machine judge on every
(unit, system summary) pair, then hands arrays to the pure modules (`draft_quality`,
`budget.*`). Also builds the training rows of the budget regressor for `budget_service`.
"""

import logging
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import pearsonr, spearmanr

from annotation.drafting import DEFAULT_DRAFTER, get_drafter
from annotation.drafting.service import draft_context
from annotation.models import ACU, Document, ReferenceSentence, Summary
from annotation.text import attach_units_to_sentences
from hits.selectors import counted_judgments
from scoring.drafts import comparison
from scoring.drafts import quality as draft_quality
from scoring.drafts.unit_budget import curve, features, regressor
from scoring.machine.judges import get_judge

logger = logging.getLogger(__name__)

MATCH_THRESHOLD = 0.5  # symmetric similarity a draft and a human ACU need to be matched
BUDGET_SHARES = (0.25, 0.5, 0.75)


def default_judge_name() -> str:
    """The embedding judge when the ML extras are installed, else the lexical one."""
    try:
        judge = get_judge("embedding")
        if judge.available()[0]:
            return "embedding"
    except Exception as exc:  # noqa: BLE001 - any failure to load means: use the lexical judge
        logger.info("embedding judge unavailable (%s); using the lexical judge", exc)
    return "lexical"


@dataclass
class DraftTables:
    """One dataset, sentence by sentence, with drafts and judged probabilities."""

    sentence_ids: list[int]
    sentence_texts: list[str]
    sentence_document: np.ndarray  # index into documents
    documents: list[int]
    systems: list[int]
    system_names: list[str]
    human_units: list[tuple[int, str, int]]  # (ACU id, text, sentence index)
    drafts: list[list[str]]
    summary_texts: list[list[str]]  # documents x systems
    human_p: np.ndarray = field(default=None)  # human units x systems
    draft_p: np.ndarray = field(default=None)  # drafts (flattened in sentence order) x systems

    @property
    def draft_sentence(self) -> np.ndarray:
        return np.array([i for i, ds in enumerate(self.drafts) for _ in ds], dtype=int)

    @property
    def human_sentence(self) -> np.ndarray:
        return np.array([s for _, _, s in self.human_units], dtype=int)

    def sums(self):
        n = len(self.sentence_ids)
        hs, hc = draft_quality.sentence_sums(self.human_p, self.human_sentence, n)
        ds, dc = draft_quality.sentence_sums(self.draft_p, self.draft_sentence, n)
        return hs, hc, ds, dc


def _complete_grid(dataset, documents: range | None = None):
    """Documents and systems forming a complete matrix: systems that summarised every
    document with a reference (others are left out of the figures); with `documents`, only the
    documents at those positions in the dataset's order."""
    summaries = Summary.objects.filter(document__dataset=dataset)
    if documents is not None:
        positions = list(
            Document.objects.filter(dataset=dataset).order_by("position", "pk").values_list("position", flat=True)
        )[documents.start : documents.stop]
        summaries = summaries.filter(document__position__in=positions)
    rows = list(
        summaries.values_list("document_id", "system_id", "system__name", "text", "document__position").order_by(
            "document__position", "system__name"
        )
    )
    documents = sorted({(r[4], r[0]) for r in rows})
    doc_ids = [d for _, d in documents]
    by_system = defaultdict(dict)
    names = {}
    for doc, system, name, text, _ in rows:
        by_system[system][doc] = text
        names[system] = name
    systems = sorted((s for s, docs in by_system.items() if len(docs) == len(doc_ids)), key=lambda s: names[s])
    texts = [[by_system[s][d] for s in systems] for d in doc_ids]
    return doc_ids, systems, [names[s] for s in systems], texts


def read_unit_file(path) -> list[list[str]]:
    """A unit file in the pyramid format (Lite3Pyramid's SCUs.txt / STUs.txt): one line per
    reference, in the dataset's document order, its units separated by tabs."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"Cannot read the unit file {path}: {exc}") from None
    return [[u.strip() for u in line.split("\t") if u.strip()] for line in lines]


def _units_by_reference(dataset, units_file) -> dict[int, list[str]]:
    """The file's units per reference id: line i is the dataset's i-th document (by position)
    that has a reference."""
    from annotation.models import Reference

    lines = read_unit_file(units_file)
    references = list(
        Reference.objects.filter(document__dataset=dataset).order_by("document__position").values_list("pk", flat=True)
    )
    if len(lines) != len(references):
        raise ValueError(
            f"The unit file {units_file} has {len(lines)} lines but dataset “{dataset.name}” has "
            f"{len(references)} references: one line per reference, in document order."
        )
    return dict(zip(references, lines, strict=True))


def _drafts(dataset, sentences, *, drafter: str, drafts_cache: dict | None, units_file) -> list[list[str]]:
    """The drafts of each sentence (in order), reference by reference: the drafter's (kept in
    `drafts_cache` by drafter and reference), or the unit file's units attached to the
    sentence each overlaps most."""
    by_reference = defaultdict(list)
    for i, (_, _text, _, reference) in enumerate(sentences):
        by_reference[reference].append(i)
    from_file = _units_by_reference(dataset, units_file) if units_file is not None else None
    engine = get_drafter(drafter) if units_file is None else None
    context = draft_context(dataset)
    drafted: dict[int, list[str]] = {}
    for reference, members in by_reference.items():
        texts = [sentences[i][1] for i in members]
        key = (drafter, reference)
        if from_file is not None:
            out = _attached(from_file.get(reference, []), texts)
        elif drafts_cache is not None and key in drafts_cache:
            out = drafts_cache[key]
        else:
            out = engine.draft(texts, context)
            if drafts_cache is not None:
                drafts_cache[key] = out
        drafted.update(zip(members, out, strict=False))
    return [drafted[i] for i in range(len(sentences))]


def _attached(units: list[str], texts: list[str]) -> list[list[str]]:
    """A reference's units, each under the sentence it overlaps most."""
    attached = attach_units_to_sentences(units, texts) if texts else []
    return [[u for u, k in zip(units, attached, strict=True) if k == j] for j in range(len(texts))]


def build_tables(
    dataset, *, drafter: str, judge, drafts_cache: dict | None = None, units_file=None, documents: range | None = None
) -> DraftTables:
    """Draft every sentence of the dataset's documents (with summaries) and judge every
    human ACU and draft against every system summary of its document. With `units_file` (the
    pyramid format) its units stand in for the drafts, each attached to the sentence it overlaps most."""
    doc_ids, systems, system_names, summary_texts = _complete_grid(dataset, documents)
    position = {d: i for i, d in enumerate(doc_ids)}
    sentences = list(
        ReferenceSentence.objects.filter(reference__document_id__in=doc_ids)
        .select_related("reference")
        .order_by("reference__document__position", "position")
        .values_list("pk", "text", "reference__document_id", "reference_id")
    )
    index = {pk: i for i, (pk, *_rest) in enumerate(sentences)}
    units = [
        (pk, text, index[sentence])
        for pk, text, sentence in ACU.objects.filter(reference__document_id__in=doc_ids, machine=False)
        .order_by("reference__document__position", "sentence__position", "position")
        .values_list("pk", "text", "sentence_id")
    ]
    drafts = _drafts(dataset, sentences, drafter=drafter, drafts_cache=drafts_cache, units_file=units_file)
    tables = DraftTables(
        sentence_ids=[s[0] for s in sentences],
        sentence_texts=[s[1] for s in sentences],
        sentence_document=np.array([position[s[2]] for s in sentences], dtype=int),
        documents=doc_ids,
        systems=systems,
        system_names=system_names,
        human_units=units,
        drafts=drafts,
        summary_texts=summary_texts,
    )
    tables.human_p = _judge_units(
        judge, [t for _, t, _ in units], tables.sentence_document[tables.human_sentence], summary_texts
    )
    flat = [d for ds in drafts for d in ds]
    tables.draft_p = _judge_units(judge, flat, tables.sentence_document[tables.draft_sentence], summary_texts)
    return tables


def _judge_units(judge, texts: list[str], documents: np.ndarray, summary_texts) -> np.ndarray:
    m = len(summary_texts[0]) if summary_texts else 0
    pairs = [(text, summary_texts[d][j]) for text, d in zip(texts, documents, strict=False) for j in range(m)]
    return judge.judge(pairs).reshape(len(texts), m) if pairs else np.zeros((len(texts), m))


def human_scores(dataset, tables: DraftTables) -> np.ndarray:
    """documents x systems: the all-human ACU scores (majority of the counted human judgments
    per ACU and summary, a tie is not present), over the human ACUs of each reference."""
    summary_of = {
        (d, s): pk
        for pk, d, s in Summary.objects.filter(document_id__in=tables.documents).values_list(
            "pk", "document_id", "system_id"
        )
    }
    votes: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for summary, acu, present in counted_judgments(dataset).values_list(
        "assignment__hit__summary_id", "acu_id", "present"
    ):
        votes[(summary, acu)][0] += int(present)
        votes[(summary, acu)][1] += 1
    units_by_doc = defaultdict(list)
    for acu, _, sentence in tables.human_units:
        units_by_doc[int(tables.sentence_document[sentence])].append(acu)
    X = np.full((len(tables.documents), len(tables.systems)), np.nan)
    for i, doc in enumerate(tables.documents):
        for j, system in enumerate(tables.systems):
            summary = summary_of[(doc, system)]
            labels = [
                2 * votes[(summary, a)][0] > votes[(summary, a)][1] for a in units_by_doc[i] if (summary, a) in votes
            ]
            if labels:
                X[i, j] = float(np.mean(labels))
    return X


def feature_matrix(tables: DraftTables, other_drafts: list[list[list[str]]] | None = None) -> np.ndarray:
    """features.FEATURES per sentence; with `other_drafts` (per other drafter, drafts per
    sentence) one more column per drafter: its agreement with the tables' drafter."""
    _, _, ds, dc = tables.sums()
    scores = np.divide(ds, dc[:, None], out=np.zeros_like(ds), where=dc[:, None] > 0)
    return np.array(
        [
            features.sentence_features(t, d, scores[i], [o[i] for o in other_drafts or []])
            for i, (t, d) in enumerate(zip(tables.sentence_texts, tables.drafts, strict=False))
        ]
    )


def drafts_of(dataset, tables: DraftTables, drafter: str) -> list[list[str]]:
    """Another drafter's drafts of the tables' sentences (for the agreement feature)."""
    from annotation.models import ReferenceSentence as Sentence

    reference_of = dict(Sentence.objects.filter(pk__in=tables.sentence_ids).values_list("pk", "reference_id"))
    by_reference = defaultdict(list)
    for i, pk in enumerate(tables.sentence_ids):
        by_reference[reference_of[pk]].append(i)
    engine, context = get_drafter(drafter), draft_context(dataset)
    out: list[list[str]] = [[] for _ in tables.sentence_ids]
    for members in by_reference.values():
        for i, drafts in zip(members, engine.draft([tables.sentence_texts[i] for i in members], context), strict=False):
            out[i] = drafts
    return out


def matching(tables: DraftTables, judge, threshold: float = MATCH_THRESHOLD) -> dict:
    """One-to-one matching of each reference's drafts to its human ACUs (micro P/R/F1)."""
    matched, drafts, human = matching_per_document(tables, judge, threshold)
    return {
        "threshold": threshold,
        **draft_quality.precision_recall_f1(int(matched.sum()), int(drafts.sum()), int(human.sum())),
    }


def matching_per_document(tables: DraftTables, judge, threshold: float = MATCH_THRESHOLD):
    """Per document: matched drafts, drafts and human ACUs of the one-to-one matching."""
    n = len(tables.documents)
    matched, drafts, human = np.zeros(n, int), np.zeros(n, int), np.zeros(n, int)
    draft_doc = tables.sentence_document[tables.draft_sentence] if len(tables.draft_sentence) else np.zeros(0, int)
    human_doc = tables.sentence_document[tables.human_sentence] if tables.human_units else np.zeros(0, int)
    flat = [d for ds in tables.drafts for d in ds]
    human_texts = [t for _, t, _ in tables.human_units]
    for doc in range(n):
        ds = [flat[i] for i in np.flatnonzero(draft_doc == doc)]
        hs = [human_texts[i] for i in np.flatnonzero(human_doc == doc)]
        drafts[doc], human[doc] = len(ds), len(hs)
        matched[doc] = len(_matched_pairs(judge, ds, hs, threshold))
    return matched, drafts, human


def _matched_pairs(judge, ds: list[str], hs: list[str], threshold: float) -> list[tuple[int, int]]:
    if not ds or not hs:
        return []
    forward = judge.judge([(d, h) for d in ds for h in hs]).reshape(len(ds), len(hs))
    backward = judge.judge([(h, d) for d in ds for h in hs]).reshape(len(ds), len(hs))
    return draft_quality.match_one_to_one(draft_quality.symmetric_similarity(forward, backward), threshold)


def sentence_errors(tables: DraftTables, judge, limit: int, threshold: float = MATCH_THRESHOLD) -> list[dict]:
    """The `limit` sentences whose drafts and human ACUs (as attached to the sentence) agree least:
    per sentence the drafts with no human match, the human ACUs with no draft, and both lists."""
    human_texts = [t for _, t, _ in tables.human_units]
    human_of = defaultdict(list)
    for k, s in enumerate(tables.human_sentence):
        human_of[int(s)].append(human_texts[k])
    rows = []
    for i, text in enumerate(tables.sentence_texts):
        ds, hs = tables.drafts[i], human_of[i]
        pairs = _matched_pairs(judge, ds, hs, threshold)
        matched_d, matched_h = {a for a, _ in pairs}, {b for _, b in pairs}
        rows.append(
            {
                "sentence": text,
                "errors": len(ds) + len(hs) - 2 * len(pairs),
                "drafts": ds,
                "human_acus": hs,
                "unmatched_drafts": [d for k, d in enumerate(ds) if k not in matched_d],
                "missed_human_acus": [h for k, h in enumerate(hs) if k not in matched_h],
            }
        )
    rows.sort(key=lambda r: -r["errors"])
    return rows[:limit]


def _compare(tables, other, judge, Xk, docs, sub, other_sub, resamples: int) -> dict:
    """The drafts and the file's units side by side on the documents with human scores: each
    set's precision, recall, F1 and summary-level Pearson with 95% bootstrap intervals over
    documents, and drafts − file with its paired interval (`comparison.compare`)."""
    sets = []
    for t, s in ((tables, sub), (other, other_sub)):
        matched, drafts, human = matching_per_document(t, judge)
        scores = curve.mixed_scores(*s, np.zeros(len(s[0]), dtype=bool), len(docs))
        sets.append(comparison.per_document(matched[docs], drafts[docs], human[docs], Xk, scores))
    c = comparison.compare(sets[0], sets[1], n_resamples=resamples, rng=0)
    return {"drafts": c.pop("a"), "file": c.pop("b"), **c}


def report(
    dataset,
    *,
    drafter: str = DEFAULT_DRAFTER,
    judge_name: str | None = None,
    budgets=BUDGET_SHARES,
    seed: int = 0,
    random_draws: int = 20,
    criterion: str = "abs",
    agreement_with: tuple[str, ...] = (),
    against=None,
    worst_sentences: int = 0,
    documents: range | None = None,
    resamples: int = 10_000,
) -> dict:
    """Every figure of `draft_report`; `criterion` is the per-sentence error the budget
    regressor learns (`abs`, Lite2.x's, or `spread`, see `draft_quality.sentence_errors`)."""
    judge_name = judge_name or default_judge_name()
    judge = get_judge(judge_name)
    tables = build_tables(dataset, drafter=drafter, judge=judge, documents=documents)
    if not tables.human_units:
        raise ValueError(f"Dataset “{dataset.name}” has no human ACUs to compare the drafts with.")
    X = human_scores(dataset, tables)
    keep = ~np.isnan(X).any(axis=1)
    hs, hc, ds, dc = tables.sums()
    lite2x = draft_quality.sentence_errors(hs, hc, ds, dc)
    errors = draft_quality.sentence_errors(hs, hc, ds, dc, criterion)
    draft_counts = np.array([len(d) for d in tables.drafts])
    out = {
        "dataset": dataset.name,
        "drafter": drafter,
        "judge": judge.describe(),
        "documents": len(tables.documents),
        "systems": len(tables.systems),
        "sentences": len(tables.sentence_ids),
        "matching": matching(tables, judge),
        "per_sentence": {
            "drafts_mean": float(draft_counts.mean()),
            "human_acus_mean": float(hc.mean()),
            "count_pearson": float(pearsonr(draft_counts, hc)[0]) if draft_counts.std() and hc.std() else None,
            "count_mean_abs_difference": float(np.abs(draft_counts - hc).mean()),
        },
        "units_per_reference": len(tables.draft_sentence) / max(len(tables.documents), 1),
        "lite2x": {
            "sentence_error_mean": float(lite2x.mean()),
            "sentence_error_median": float(np.median(lite2x)),
            "sentence_error_p90": float(np.quantile(lite2x, 0.9)),
        },
    }
    other = None
    if against is not None:
        other = build_tables(dataset, drafter=drafter, judge=judge, units_file=against, documents=documents)
        out["against"] = {
            "file": str(against),
            "matching": matching(other, judge),
            "units_per_reference": len(other.draft_sentence) / max(len(other.documents), 1),
        }
    if worst_sentences:
        out["sentence_errors"] = sentence_errors(tables, judge, worst_sentences)
    if not keep.any():
        out["budget"] = []
        out["note"] = "No human judgments: the correlations need all-human scores."
        return out
    docs = np.flatnonzero(keep)
    remap = -np.ones(len(tables.documents), dtype=int)
    remap[docs] = np.arange(len(docs))
    sel = keep[tables.sentence_document]
    doc_of = remap[tables.sentence_document[sel]]
    sub = (doc_of, hs[sel], hc[sel], ds[sel], dc[sel])
    Xk = X[keep]
    every = np.ones(sel.sum(), dtype=bool)
    out["lite2x"]["all_drafts"] = curve.correlations(Xk, curve.mixed_scores(*sub, ~every, len(docs)))
    out["lite2x"]["all_human_acus"] = curve.correlations(Xk, curve.mixed_scores(*sub, every, len(docs)))
    if other is not None:
        _, _, ods, odc = other.sums()
        other_sub = (doc_of, hs[sel], hc[sel], ods[sel], odc[sel])
        out["against"]["all_units"] = curve.correlations(Xk, curve.mixed_scores(*other_sub, ~every, len(docs)))
        out["against"]["comparison"] = _compare(tables, other, judge, Xk, docs, sub, other_sub, resamples)
    if len(docs) < 2:  # the regressor is cross-fitted by document
        out["budget"] = []
        out["note"] = "The budget curve needs two or more documents with human judgments."
        return out
    F = feature_matrix(tables, [drafts_of(dataset, tables, name) for name in agreement_with])[sel]
    predicted = regressor.out_of_fold(F, errors[sel], doc_of, seed=seed)
    out["regressor"] = {
        "model": "sklearn GradientBoostingRegressor, 5-fold GroupKFold by document (out-of-fold)",
        "criterion": criterion,
        "features": list(features.FEATURES) + [f"agreement_{name}" for name in agreement_with],
        "oof_pearson": float(pearsonr(predicted, errors[sel])[0]),
        "oof_spearman": float(spearmanr(predicted, errors[sel])[0]),
    }
    out["budget"] = [
        curve.budget_point(Xk, share, predicted, sub, random_draws=random_draws, seed=seed, oracle=errors[sel])
        for share in budgets
    ]
    return out
