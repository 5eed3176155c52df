"""Worker QC from a machine judge: workers who disagree with the crowd where a calibrated judge
is confident and the crowd agrees with it.

Threshold (documented on the workers page): on pairs where the newest calibrated judge run
gives P(present) >= 0.9 or <= 0.1 and the majority of the *other* workers on the pair says the
same, a worker whose answer differs on more than 30% of at least 10 such pairs is marked
"disagrees with crowd and machine". The judge and the crowd's majority are no gold evidence, so the
mark is information only, shown as a note (never a flag, which needs gold with a confidence bound:
scoring/runs/workers.py): it never changes alpha, the flagged count or the stored runs.
"""

import logging

import numpy as np
from django.core.cache import cache

from hits import versions
from hits.models import MachineJudgment
from scoring.machine.selectors import latest_runs
from scoring.runs.data import load_judgments

QC_CONFIDENCE = 0.9
QC_DISAGREEMENT = 0.3
QC_MIN_PAIRS = 10
CACHE_SECONDS = 3600  # a new judgment changes the key before that

log = logging.getLogger(__name__)
FLAG = "disagrees with crowd and machine"


def qc_run(dataset):
    """The newest finished, calibrated judge run of the dataset, if any."""
    return next((r for r in latest_runs(dataset) if r.calibration.get("target")), None)


def disagreement(
    summary, acu, worker, present, probability, confidence: float = QC_CONFIDENCE
) -> dict[int, tuple[int, int]]:
    """{worker: (disagreements, confident pairs where the others' majority agrees with the machine)}.

    Arrays are one row per judgment; `probability` is the machine's P(present) of its pair (NaN
    when the machine did not judge it). Pure numpy."""
    summary, acu, worker = np.asarray(summary), np.asarray(acu), np.asarray(worker)
    present = np.asarray(present, dtype=bool)
    probability = np.asarray(probability, dtype=float)
    if len(summary) == 0:
        return {}
    pairs, pair_code = np.unique(np.stack([summary, acu], axis=1), axis=0, return_inverse=True)
    pair_code = pair_code.ravel()
    yes = np.bincount(pair_code, weights=present.astype(float), minlength=len(pairs))
    total = np.bincount(pair_code, minlength=len(pairs))
    others_yes = yes[pair_code] - present
    others_total = total[pair_code] - 1
    others_majority = 2 * others_yes > others_total
    with np.errstate(invalid="ignore"):
        machine = probability >= 0.5
        confident = (probability >= confidence) | (probability <= 1 - confidence)
    counted = confident & (others_total >= 1) & (others_majority == machine)
    disagrees = counted & (present != machine)
    out = {}
    for w in np.unique(worker[counted]).tolist():
        mine = worker == w
        out[int(w)] = (int(np.count_nonzero(disagrees & mine)), int(np.count_nonzero(counted & mine)))
    return out


def machine_flags(dataset, batch=None) -> tuple[dict[int, dict], object]:
    """({worker id: {"disagreements", "pairs", "share", "flag"}}, the judge run used).

    Computed once per judge run and version of the scope's judgments (hits.versions, bumped by
    every submission, rejection and exclusion) and kept in the cache: the workers page would
    otherwise read every judgment of the round on each request (529,020 at RoSE scale)."""
    run = qc_run(dataset)
    if run is None:
        return {}, None
    batch_id = batch.pk if batch else None
    key = f"machine-qc:{dataset.pk}:{batch_id or 0}:{run.pk}:{versions.current(dataset.pk, batch_id)}"
    try:
        flags = cache.get(key)
    except Exception:  # noqa: BLE001 - the cache (Redis) is down: compute, the page still shows
        log.warning("cache unavailable for %s; computing the machine QC flags in the request", key)
        flags = None
    if flags is None:
        flags = _flags(dataset, batch, run)
        try:
            cache.set(key, flags, CACHE_SECONDS)
        except Exception:  # noqa: BLE001 - as above
            log.warning("cache unavailable; machine QC flags of %s not kept", key)
    return flags, run


def _flags(dataset, batch, run) -> dict[int, dict]:
    judgments = load_judgments(dataset, batch, include_excluded=True)
    if len(judgments) == 0:
        return {}
    machine = {
        (s, a): p
        for s, a, p in MachineJudgment.objects.filter(run=run).values_list("summary_id", "acu_id", "probability")
    }
    probability = np.array(
        [
            machine.get((s, a), np.nan) if machine.get((s, a)) is not None else np.nan
            for s, a in zip(judgments.summary.tolist(), judgments.acu.tolist(), strict=False)
        ],
        dtype=float,
    )
    counts = disagreement(judgments.summary, judgments.acu, judgments.worker, judgments.present, probability)
    out = {}
    for w, (bad, n) in counts.items():
        share = bad / n if n else 0.0
        out[w] = {
            "disagreements": bad,
            "pairs": n,
            "share": share,
            "flag": FLAG if n >= QC_MIN_PAIRS and share > QC_DISAGREEMENT else "",
        }
    return out
