"""The figures a lead reads of crowd batches, each computed here once: progress (places done, in
progress, past their deadline, left), the submissions of the last hour and the estimated finish,
spend by kind and the budget left. The batch page, the batch list, the dashboard (overview and
live poll) and the API read these functions, so two pages cannot disagree.

- A batch's places are its HITs' opened places (`HIT.max_assignments`): the assignments per HIT
  of a fixed batch, the places an adaptive batch has opened so far (a settled HIT opens no more).
- Done: submitted or approved; in progress: held and within the deadline. A place held past its
  deadline is left (the next handout or the beat releases it); a rejected or expired one is open
  again, so it is left too.
- The estimated finish counts only the work still handed out: batches published and not past
  their end (`Batch.expires_at`); a stopped, complete or expired batch has none, and the rate is
  that of the handed-out batches' submissions. A scope with a handed-out batch that cannot finish
  by itself (`hits.selectors.waiting`: places no worker left may take) has no estimated finish:
  its `cannot_finish` names those batches instead (progress and scope_figures look, in the pages
  cache: `hits.selectors.waiting.waiting_summary`; batch_figures alone does not).

Four queries per scope whatever its size. The assignments per status, the last hour's
submissions and the ledger sums come from `_counts`: on PostgreSQL the batches' running counts
(hits.tallies), since counting the rows of a large dataset takes seconds (bench/tally_bench.py);
the embedded SQLite counts the rows.
"""

from datetime import timedelta
from decimal import Decimal

from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from hits import tallies
from hits.models import HIT, Assignment, Batch, LedgerEntry, Tally
from hits.money import cents
from hits.provider_interface import money_currency
from hits.selectors.waiting import waiting_summary

RATE_WINDOW = timedelta(hours=1)
STATUSES = tuple(Assignment.Status.values)


def _zero_spend() -> dict:
    return {k: Decimal("0.00") for k in LedgerEntry.Kind.values}


def batch_figures(batches: QuerySet[Batch] | list[Batch], now=None) -> dict[int, dict]:
    """{batch id: {places, hits, by_status, done, in_progress, overdue, left, rejected, percent,
    per_hour, open, spend by kind, budget}} of these batches: their HITs' places (one grouped
    query), their assignments per status, submissions of the last hour and ledger sums (`_counts`)
    and the places held past their deadline (one query on the (status, deadline) index)."""
    now = now or timezone.now()
    batches = list(batches)
    ids = [b.pk for b in batches]
    out = {
        b.pk: {
            "places": 0,
            "hits": 0,
            "overdue": 0,
            "open": b.status == Batch.Status.PUBLISHED and (b.expires_at is None or b.expires_at > now),
            "budget": b.budget,
            "currency": money_currency(b),
        }
        for b in batches
    }
    if ids:
        for batch_id, hits, places in (
            HIT.objects.filter(batch_id__in=ids)
            .order_by()
            .values_list("batch_id")
            .annotate(n=Count("pk"), places=Sum("max_assignments"))
        ):
            out[batch_id].update(hits=hits, places=places or 0)
        overdue = Assignment.objects.filter(
            status=Assignment.Status.ASSIGNED, deadline__lte=now, hit__batch_id__in=ids
        ).order_by()
        for batch_id, n in overdue.values_list("hit__batch_id").annotate(n=Count("pk")):
            out[batch_id]["overdue"] = n
    counts = _counts(ids, now - RATE_WINDOW)
    for batch_id, entry in out.items():
        entry.update(counts.get(batch_id) or {"by_status": {}, "per_hour": 0, "spend": _zero_spend()})
        entry.update(_progress(entry))
    return out


def _counts(ids: list[int], since) -> dict[int, dict]:
    """{batch id: {by_status, per_hour, spend}}: assignments per status, submissions since `since`
    (from its minute on) and ledger sums by kind. On PostgreSQL from the batches' running counts
    (`hits.tallies`: a few rows per batch, whatever its size; bench/tally_bench.py: counting the
    rows of a 2-million-assignment dataset takes seconds); on other databases (the embedded
    SQLite, small studies) counted from the rows."""
    out: dict[int, dict] = {i: {"by_status": {}, "per_hour": 0, "spend": _zero_spend()} for i in ids}
    if not ids:
        return out
    since = since.replace(second=0, microsecond=0)
    if tallies.available():
        since_minute = int(since.timestamp() // 60)
        tallied = Tally.objects.filter(batch_id__in=ids).exclude(what="hits")
        for batch_id, what, minute, n, amount in tallied.values_list("batch_id", "what", "minute", "n", "amount"):
            entry = out[batch_id]
            if what == tallies.SUBMISSIONS:
                entry["per_hour"] += n if minute >= since_minute else 0
            elif what.startswith(tallies.LEDGER):
                entry["spend"][what.removeprefix(tallies.LEDGER)] += amount
            else:
                entry["by_status"][what] = entry["by_status"].get(what, 0) + n
        for entry in out.values():
            entry["by_status"] = {s: n for s, n in entry["by_status"].items() if n}
        return out
    rows = (
        Assignment.objects.filter(hit__batch_id__in=ids)
        .order_by()
        .values("hit__batch_id")
        .annotate(
            **{f"s_{s}": Count("pk", filter=Q(status=s)) for s in STATUSES},
            recent=Count("pk", filter=Q(submitted_at__gte=since)),
        )
    )
    for values in rows:
        row: dict = dict(values)  # the per-status keys are built, not literal
        entry = out[row["hit__batch_id"]]
        entry["by_status"] = {s: row[f"s_{s}"] for s in STATUSES if row[f"s_{s}"]}
        entry["per_hour"] = row["recent"]
    for batch_id, paid in _ledger(ids).items():
        out[batch_id]["spend"] = paid
    return out


def _ledger(ids: list[int]) -> dict[int, dict]:
    """{batch id: {kind: amount}} of the ledger entries of these batches, one query. Rounded to
    the cent: SQLite stores a DecimalField as a floating-point number and sums it as one (ten
    thousand $0.10 rows sum to 1000.0000000001588), which the budget check would read as over."""
    out: dict[int, dict] = {}
    for batch_id, kind, amount in (
        LedgerEntry.objects.filter(batch_id__in=ids).order_by().values_list("batch_id", "kind").annotate(Sum("amount"))
    ):
        out.setdefault(batch_id, _zero_spend())[kind] = cents(amount)
    return out


def _progress(entry: dict) -> dict:
    by_status, places = entry["by_status"], entry["places"]
    done = sum(by_status.get(s, 0) for s in Assignment.COUNTED)
    in_progress = by_status.get(Assignment.Status.ASSIGNED, 0) - entry["overdue"]
    return {
        "done": done,
        "in_progress": in_progress,
        "left": max(0, places - done - in_progress),
        "rejected": by_status.get(Assignment.Status.REJECTED, 0),
        "percent": round(100 * done / places, 1) if places else 0,
    }


def combine(figures: list[dict], now=None) -> dict:
    """The figures of a scope of several batches: sums, and the estimated finish of the work still
    handed out (module docstring)."""
    now = now or timezone.now()
    total: dict = {"batches": len(figures), "by_status": {}}
    for key in ("places", "hits", "overdue"):
        total[key] = sum(f[key] for f in figures)
    for f in figures:
        for status, n in f["by_status"].items():
            total["by_status"][status] = total["by_status"].get(status, 0) + n
    total.update(_progress(total))
    total["per_hour"] = sum(f["per_hour"] for f in figures)
    handed_out = [f for f in figures if f["open"]]
    open_work = sum(f["left"] + f["in_progress"] for f in handed_out)
    rate = sum(f["per_hour"] for f in handed_out) / RATE_WINDOW.total_seconds()
    total["cannot_finish"] = [f["cannot_finish"] for f in handed_out if f.get("cannot_finish")]
    finishes = rate and open_work and not total["cannot_finish"]
    total["eta"] = now + timedelta(seconds=open_work / rate) if finishes else None
    return total


def _with_waiting(batches: list[Batch], figures: dict[int, dict]) -> list[dict]:
    """The figures, each handed-out batch with places left that no worker can take marked
    `cannot_finish`: {batch, name, places, hits} (`hits.selectors.waiting.waiting_summary`, kept
    WAITING_SECONDS in the pages cache)."""
    for batch in batches:
        entry = figures[batch.pk]
        if entry["open"] and entry["left"] and (waiting := waiting_summary(batch)):
            entry["cannot_finish"] = {"batch": batch.pk, "name": batch.name, **waiting}
    return list(figures.values())


def money(figures: list[dict]) -> dict:
    """Spend by kind and in total over these batches' figures (of one currency), their budget
    (None when no batch has one), the share of it spent and what is left of it (or how far past it).
    The budget is held against the spend of the batches that have one (`budgeted`); the spend of
    those without one is `unbudgeted` (a walkthrough read "$1.80 of $61.00 budget" where $1.80 was
    every batch's spend and $61.00 the budget of only some)."""
    totals: dict = _zero_spend()
    budgeted = unbudgeted = Decimal("0.00")
    for f in figures:
        for kind, amount in f["spend"].items():
            totals[kind] += amount
        spent = sum(f["spend"].values(), Decimal("0.00"))
        if f["budget"] is None:
            unbudgeted += spent
        else:
            budgeted += spent
    totals["total"] = sum(totals.values(), Decimal("0.00"))
    budgets = [f["budget"] for f in figures if f["budget"] is not None]
    budget = sum(budgets, Decimal("0.00")) if budgets else None
    totals["budget"] = budget
    totals["budgeted"] = budgeted if budget is not None else None
    totals["unbudgeted"] = unbudgeted
    totals["budget_left"] = budget - budgeted if budget is not None else None
    # what a page says when the spend passed the budget ("$0.80 over", not "-$0.80 left")
    totals["budget_over"] = -totals["budget_left"] if budget is not None and totals["budget_left"] < 0 else None
    totals["share"] = round(100 * float(budgeted / budget), 1) if budget else None
    totals["currency"] = figures[0].get("currency", "USD") if figures else "USD"
    return totals


def money_by_currency(figures: list[dict]) -> list[dict]:
    """`money` of these batches' figures, one per currency their providers pay in (a Prolific batch
    in pounds beside an in-house one in dollars is never summed into one figure); dollars first,
    and one in dollars when there is no batch."""
    groups: dict[str, list[dict]] = {}
    for f in figures:
        groups.setdefault(f.get("currency", "USD"), []).append(f)
    order = sorted(groups, key=lambda c: (c != "USD", c))
    return [money(groups[c]) for c in order] or [money([])]


def scope_batches(dataset, batch=None) -> QuerySet[Batch]:
    """The crowd batches of a dashboard's scope: the dataset's, or the one round's (an imported or
    machine round has no places or pay: none). The dataset's leave its drafts out: a draft is a cost
    estimate, whose places nobody can take and whose budget is not spent on anything yet (three
    drafts made to compare costs read "92 of 484 assignments, 392 left" beside 124 published places)."""
    batches = Batch.objects.filter(dataset=dataset, kind=Batch.Kind.CROWD)
    if batch is not None:
        return batches.filter(pk=batch.pk)
    return batches.exclude(status=Batch.Status.DRAFT)


def progress(batches, now=None) -> dict:
    """Progress of a scope of batches (a queryset or list): places, done, in progress, overdue,
    left, rejected, per status, submissions of the last hour, estimated finish (None with a batch
    that cannot finish by itself, named in `cannot_finish`), percent."""
    now = now or timezone.now()
    batches = list(batches)
    return combine(_with_waiting(batches, batch_figures(batches, now)), now)


def spend(batches) -> dict:
    """Spend by kind and in total of a scope of batches, its budget, share spent and budget left."""
    batches = list(batches)
    counts = _counts([b.pk for b in batches], timezone.now())
    return money([{"spend": counts[b.pk]["spend"], "budget": b.budget, "currency": money_currency(b)} for b in batches])


def scope_figures(batches, now=None) -> tuple[dict, list[dict]]:
    """(progress, spend per currency) of a scope, from one read of its figures."""
    now = now or timezone.now()
    batches = list(batches)
    figures = _with_waiting(batches, batch_figures(batches, now))
    return combine(figures, now), money_by_currency(figures)


def batch_progress(batch: Batch) -> dict:
    return progress([batch])


def batch_spend(batch: Batch) -> dict:
    """Spend of one batch, whatever its kind (the ledger view, the bonus budget check)."""
    return spend([batch])
