"""A stored scoring run as the JSON of `compute_scores --json` and the API's scores: the human
figures of the run, and beside them (never mixed in) the newest finished judge run of each judge."""

from scoring.machine.reports import machine_summary
from scoring.machine.selectors import latest_runs
from scoring.models import ScoringRun
from scoring.results.leaderboard import methods, pairwise_resamples, with_holm


def scores_json(run: ScoringRun) -> dict:
    """Systems, alpha, counts, pairwise tests, the common-documents comparison, the run id and
    the machine judges' summaries."""
    out = run.outputs
    pairwise = with_holm(out.get("pairwise"))
    common = out.get("common")
    if common and common.get("pairwise"):
        common = {**common, "pairwise": with_holm(common["pairwise"])}
    holm_pairs = pairwise["holm_pairs"] if pairwise else None
    return {
        "systems": {
            name: {
                k: v
                for k, v in s.items()
                if k in ("acu", "acu_ci", "normalized_acu", "normalized_acu_ci", "length", "documents")
            }
            for name, s in out["systems"].items()
        },
        "aggregation": out.get("aggregation", "majority"),
        "alpha": out["alpha"],
        "alpha_units": out.get("alpha_units"),
        "counts": out["counts"],
        # As the stored run holds them: paired p-values on the documents each pair shares (with that
        # n), and the comparison on the documents judged for every system when coverage differs;
        # beside each `p`, its Holm-adjusted `p_holm` over the pairs (`holm_pairs` of them).
        "pairwise": pairwise,
        "common": common,
        # What the figures above are: the intervals' level and method, the tests' sides and the
        # multiple comparisons (`p` uncorrected, `p_holm` Holm's), as the systems page states them.
        "methods": methods(
            run.parameters,
            len(out["systems"]),
            holm_pairs,
            pairwise_resamples(pairwise, run.parameters.get("n_resamples")),
        ),
        "run": run.pk,
        "machine": machine_json(run.dataset),
    }


def machine_json(dataset) -> list[dict]:
    """The newest finished judge run of each judge, never mixed into the human figures above."""
    return [machine_summary(r) for r in latest_runs(dataset)]
