"""The workers page's table: a page of the stored worker rows, sorted and searched on the server.

A round of RoSE's size has 300 workers, a crowd batch thousands: the page shows `PER_PAGE` rows
(flagged workers first unless another column is chosen), links to every other page, and a
search by worker id, so every worker stays reachable while the page stays small. Pure functions
over the rows of `scoring.runs.workers.worker_table` (no queries); templates/scoring/_worker_rows.html
renders the rows.
"""

import math
from urllib.parse import urlencode

from hits.money import format_money
from hits.provider_interface import money_currency
from scoring.results.leaderboard import fixed_text

PER_PAGE = 50
MAX_QUERY = 200  # characters of a worker-id search

# Column -> sort key of a row; a row whose key is None goes last in either direction.
SORTS = {
    "worker": lambda r: r["worker"].casefold(),
    "assignments": lambda r: r["assignments"],
    "agreement": lambda r: r["agreement"],
    "gold": lambda r: r["gold_accuracy"],
    "seconds": lambda r: r["median_seconds"],
    "hourly": lambda r: hourly_sort_key(r),
    "flags": lambda r: len(r["flags"]) or None,
    "qc": lambda r: (r.get("machine_qc") or {}).get("share"),
}
DEFAULT_SORT = "-flags"  # flagged workers first (most flags first), then by worker id
KEPT = ("round", "sort", "q", "page")  # the table's state, kept by its links and after an action


def shown(row: dict, currency: str = "USD") -> dict:
    """The texts of a row's number cells ("–" for none), as the page prints them: formatted once
    per run (`scoring.results.dashboard.workers_table` caches them), not per request."""

    def text(value, digits):
        return "–" if value is None else fixed_text(value, digits)

    return {
        "agreement": text(row["agreement"], 3),
        "gold_accuracy": text(row["gold_accuracy"], 3),
        "median_seconds": text(row["median_seconds"], 0),
        "hourly": hourly_text(row, currency),
    }


def hourly_sort_key(row: dict) -> float | None:
    """What *Rate / hour* sorts on: the worker's rate in their main currency (`hourly_currency`, the
    currency of most of their timed work: `scoring.runs.workers.main_currency`), so a worker paid in
    two currencies sorts by the figure shown first, not last; rates are compared as numbers, as a
    table with workers paid in pounds and in dollars always did, and never summed. None (last) without
    a rate, or for a worker paid in several currencies in a run stored before the main currency was."""
    if row["hourly"] is not None:
        return row["hourly"]
    return (row.get("hourly_rates") or {}).get(row.get("hourly_currency") or "")


def hourly_text(row: dict, currency: str = "USD") -> str:
    """A row's rate per hour in the currency of the batches it was measured in (`hourly_rates`):
    "£9.00", or each currency's rate when the worker's paid work spans batches in several ("£9.00 ·
    $12.00", never a sum of both): the main currency's first (`hourly_sort_key` sorts on it), the
    others by their code. A run stored before rates named their currency: `currency`, its provider's."""
    rates = row.get("hourly_rates")
    if rates is None:
        return "–" if row["hourly"] is None else format_money(row["hourly"], currency)
    main = row.get("hourly_currency")
    ordered = sorted(rates.items(), key=lambda item: (item[0] != main, item[0]))
    return " · ".join(format_money(rate, code) for code, rate in ordered) or "–"


def with_actions(rows: list[dict], base: str, state_query: str, bonus_token: str) -> list[dict]:
    """A page's rows, each with its "actions": the URL of each action (`base` + "<worker id>/<action>",
    dashboard_worker_action, keeping the table's state) and the bonus form's idempotency token."""
    out = []
    for r in rows:
        prefix = f"{base}{r['worker_id']}/"
        actions = {a: f"{prefix}{a}{state_query}" for a in ("include", "exclude", "block", "bonus")}
        out.append({**r, "actions": {**actions, "token": f"{bonus_token}-{r['worker_id']}"}})
    return out


def with_bonus_batch(row: dict, assignment) -> dict:
    """A row with the batch its bonus form pays in ("bonus_batch": the worker's latest work's,
    `hits.selectors.bonus_assignments`), and the amount box's currency read from that batch."""
    if assignment is None:
        return {**row, "bonus_batch": None}
    paid_in = assignment.hit.batch
    return {**row, "bonus_batch": paid_in, "currency": money_currency(paid_in)}


def parse_sort(value: str | None) -> str:
    """A known column with an optional "-" (descending); anything else is the default."""
    value = (value or "").strip()
    return value if value.removeprefix("-") in SORTS else DEFAULT_SORT


def parse_page(value: str | None) -> int:
    return int(value) if value and value.isdecimal() and 0 < len(value) < 10 else 1


def sort_rows(rows: list[dict], sort: str) -> list[dict]:
    """Rows ordered by `sort` ("column" ascending, "-column" descending), ties by worker id;
    rows without a value in that column last."""
    column = sort.removeprefix("-")
    key = SORTS[column]
    by_id = sorted(rows, key=lambda r: (r["worker"].casefold(), r["worker_id"]))
    known = [r for r in by_id if key(r) is not None]
    known.sort(key=key, reverse=sort.startswith("-"))  # stable: ties keep the worker-id order
    return known + [r for r in by_id if key(r) is None]


def search(rows: list[dict], query: str) -> list[dict]:
    """Rows whose worker id contains `query` (case-insensitive)."""
    needle = query.casefold()
    return [r for r in rows if needle in r["worker"].casefold()] if needle else rows


def query_string(state: dict, **changes) -> str:
    """ "?..." of the table's state with `changes`, leaving out defaults ("" when nothing is left)."""
    merged = {**state, **changes}
    defaults = {"sort": DEFAULT_SORT, "page": 1, "q": "", "round": None}
    kept = {k: merged[k] for k in KEPT if merged.get(k) not in (None, "", defaults[k])}
    return f"?{urlencode(kept)}" if kept else ""


def page_numbers(page: int, pages: int, around: int = 2) -> list[int | None]:
    """Page links: the first, the last and `around` on each side of the current one; None
    marks a gap."""
    shown = sorted({1, pages, *range(max(1, page - around), min(pages, page + around) + 1)})
    out: list[int | None] = []
    for n in shown:
        if out and n - (out[-1] or 0) > 1:
            out.append(None)
        out.append(n)
    return out


def table_page(rows: list[dict], params, round_id: int | None, per_page: int = PER_PAGE) -> dict:
    """The context of one page of the workers table: its rows, the column headers' sort links,
    the page links and the counts. `params`: the request's GET (sort, q, page)."""
    sort = parse_sort(params.get("sort"))
    query = (params.get("q") or "").strip()[:MAX_QUERY]
    matched = search(rows, query)
    pages = max(1, math.ceil(len(matched) / per_page))
    page = min(parse_page(params.get("page")), pages)
    start = (page - 1) * per_page
    state = {"round": round_id, "sort": sort, "q": query, "page": page}
    headers = {}
    for column in SORTS:
        # A click sorts by the column; on the column already sorted, it reverses the order.
        current = sort.removeprefix("-") == column
        descending = sort.startswith("-")
        target = column if current and descending else f"-{column}" if current else column
        headers[column] = {
            "url": query_string(state, sort=target, page=1) or "?",
            "aria": ("descending" if descending else "ascending") if current else "none",
        }
    return {
        "rows": sort_rows(matched, sort)[start : start + per_page],
        "total": len(rows),
        "matched": len(matched),
        "first": start + 1 if matched else 0,
        "last": min(start + per_page, len(matched)),
        "page": page,
        "pages": pages,
        "page_links": [
            {"number": n, "url": query_string(state, page=n) or "?", "current": n == page} if n else None
            for n in page_numbers(page, pages)
        ],
        "previous_url": query_string(state, page=page - 1) or "?" if page > 1 else None,
        "next_url": query_string(state, page=page + 1) if page < pages else None,
        "sort": sort,
        "query": query,
        "headers": headers,
        "state_query": query_string(state),
    }


def back_query(params) -> str:
    """The table's state from a request's GET (after an action, the lead lands on the same page)."""
    round_id = params.get("round")
    state = {
        "round": round_id if round_id and str(round_id).isdecimal() else None,
        "sort": parse_sort(params.get("sort")),
        "q": (params.get("q") or "").strip()[:MAX_QUERY],
        "page": parse_page(params.get("page")),
    }
    return query_string(state)
