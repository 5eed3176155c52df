"""The interface every crowd provider implements.

The app's services own the data (batches, HITs, assignments, judgments, the ledger) and call
a provider only for what happens at the provider: publishing, paying, blocking, stopping.
A provider raises ProviderError with a message for the lead; it never leaves our data
half-written (the services write our side only after the provider call succeeded, and every
call is idempotent so a retry finishes what a crash interrupted).
"""

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from django.db.models import Count

from config.errors import ServiceError
from hits.ledger import rewards_owed
from hits.models import Assignment
from hits.money import CENT


class ProviderError(ServiceError):
    """The provider refused or could not be reached; the message is for the lead."""


def alike_price(hits) -> Decimal:
    """Paying per session (a Prolific study, a panel paying per session), every HIT of a batch is
    priced alike: the mean of the rewards of `hits` (the batch's HITs) rounded up to the cent, so a
    session of K HITs pays K times that. Publishing, the session plan and the batch page read it.
    The mean is taken here from each reward's count (a few pay buckets), exactly: SQLite's AVG()
    of a DecimalField is a floating-point mean (25 HITs of $0.92: 0.9200000000000006, up to $0.93)."""
    return alike_price_of(dict(hits.order_by().values_list("reward").annotate(n=Count("pk"))))


def alike_price_of(rewards: dict) -> Decimal:
    """`alike_price` of HITs counted as {reward: HITs} (a batch's plan before its HITs exist)."""
    total, n = sum((reward * k for reward, k in rewards.items()), Decimal("0")), sum(rewards.values())
    return (total / n if n else Decimal("0")).quantize(CENT, rounding=ROUND_CEILING)


@dataclass(frozen=True)
class SessionPrice:
    """What a provider paying per session of several HITs (Prolific) records for a batch whose every
    session is done and approved: `sessions` payments of `reward` (the session's reward, paid whole
    however many of its HITs it held) with the `fee` on each (rounded once per payment)."""

    sessions: int
    hits_per_session: int
    reward: Decimal
    fee: Decimal

    @property
    def rewards(self) -> Decimal:
        return self.reward * self.sessions

    @property
    def fees(self) -> Decimal:
        return self.fee * self.sessions


@dataclass(frozen=True)
class ExtraCost:
    """A cost of a batch beyond its HITs' places, a line of its own in the estimate (a Prolific
    screening study): at most `places` payments of `reward` with the provider's `fee` on each."""

    label: str
    places: int
    reward: Decimal
    fee: Decimal
    note: str = ""

    @property
    def rewards(self) -> Decimal:
        return self.reward * self.places

    @property
    def fees(self) -> Decimal:
        return self.fee * self.places

    @property
    def total(self) -> Decimal:
        return self.rewards + self.fees


class Capability:
    """What a provider can do beyond the interface every provider has; callers ask
    `provider.supports(...)`, never for a provider by name."""

    EXTEND = "extend"  # keep published work open longer at the provider
    BALANCE = "balance"  # report the account balance before publishing
    SYNC = "sync"  # mirror assignment states decided at the provider
    PER_HIT_PUBLISH = "per_hit_publish"  # creates HITs one by one (publishing shows progress)
    SESSIONS = "sessions"  # workers take sessions of several HITs (Prolific)
    WEBHOOKS = "webhooks"  # the provider posts signed status changes
    STUDY_LINK = "study_link"  # participants arrive by a study link; the lead pays at the provider from lists
    MORE_PLACES = "more_places"  # a published HIT can get more places (adaptive allocation)


class CrowdProvider:
    name = "base"
    label = "Provider"
    capabilities: frozenset[str] = frozenset()
    options: tuple = ()  # hits.provider_interface.options.Option, one per batch option
    closed = ""  # why new batches should not use it (shown on the new-batch form), e.g. the service closed
    payment_note = ""  # on the ledger rows it pays, e.g. "to pay at the panel"
    # True: send_bonus commits its own steps (Prolific: set up, pay call sent, paid) because its pay
    # call is not idempotent, so review.send_bonus calls it after its own transaction, not inside it;
    # its first step is a durable atomic block, so it refuses to run inside a caller's transaction.
    bonus_commits_its_steps = False
    section_template = ""  # a template the batch page includes, with `section(batch)` as `provider_section`

    def supports(self, capability: str) -> bool:
        return capability in self.capabilities

    def fee(self, amount: Decimal, assignments_per_hit: int) -> Decimal:
        """The provider's fee on a payment of `amount` (reward or bonus)."""
        return Decimal("0.00")

    def reward_fee(self, assignment, amount: Decimal) -> Decimal:
        """The fee recorded with the reward `amount` of approved `assignment` (`review.approve`, in its
        transaction): `fee`, charged on each assignment's reward. A provider that pays several HITs as
        one payment (Prolific's session) charges its fee on that payment instead."""
        return self.fee(amount, assignment.hit.batch.assignments_per_hit)

    def session_price(self, owner, rewards: dict, acus: int, places: int) -> SessionPrice | None:
        """How the cost estimate (`hits.services.batch_plan.price`) prices a provider that pays per
        session of several HITs: `owner` is the batch (a draft or later) or the spec of a new one,
        `rewards` its HITs counted as {reward: HITs}, `acus` the ACUs they carry, `places` their most
        places. None (the default, MTurk's and in-house's rule): each place is paid its HIT's reward
        with `fee` on it, as `reward_fee` records it."""
        return None

    def extra_costs(self, owner, sessions: "SessionPrice | None" = None) -> list[ExtraCost]:
        """What the batch (`owner`; the spec of a new one) costs at the provider beyond its HITs' places,
        each a line of the estimate counted in its totals (a Prolific screening study); `sessions`: the
        estimate's `session_price` of the same owner. None by default."""
        return []

    def lock_for_review(self, assignment_id: int) -> None:
        """Lock, in the caller's transaction, the provider's own rows that a decision on this assignment
        writes besides it (`review` calls it before it locks the assignment): the provider's sync locks
        them before the assignments they hold, so every path takes them in that one order and none
        deadlocks another. Nothing by default."""

    def currency(self, batch) -> str:
        """The currency the batch's rewards, bonuses, fees and budget are in (pages show its sign);
        `batch` may be a batch or the spec of one (their `provider_config`)."""
        return "USD"

    def publish(self, batch) -> None:
        """Make the batch's HITs available to workers."""
        raise NotImplementedError

    def stop(self, batch) -> None:
        """Stop offering the batch's HITs (work already accepted may still be submitted)."""
        raise NotImplementedError

    def approve(self, assignment) -> None:
        raise NotImplementedError

    def reject(self, assignment, feedback: str) -> None:
        raise NotImplementedError

    def send_bonus(self, assignment, amount: Decimal, reason: str, token: str, by=None) -> None:
        """Pay a bonus once per form `token`; `by`, the lead who sent it, is kept with what the
        provider marks of it, so a ledger row its sync writes later names them too."""
        raise NotImplementedError

    def bonus_sent(self, assignment, reason: str, token: str) -> bool:
        """Whether the bonus of form `token` may have been paid at the provider already (a retry
        of one whose ledger row was lost): `review.send_bonus` then records it, never refuses it
        over the budget. Asked only of a bonus the budget would refuse."""
        return False

    def unsettled_spend(self, batch) -> Decimal:
        """Money of the batch that left or may have left at the provider but has no ledger row (a pay
        call whose answer was lost, so whether it paid is unknown; a payment whose ledger write failed,
        until it is written): the budget check counts it as spent, so a lead never passes the budget
        because of it (`money_budget.bonus_passes_budget`). Never money its ledger rows count already."""
        return Decimal("0.00")

    def owed_rewards(self, batch) -> tuple[int, Decimal]:
        """(how many, their rewards and fees) of the batch's work submitted and not yet approved or
        rejected: the money its approvals will write to the ledger (`hits.ledger.reward_and_fee`, the
        rule `review.approve` records by). The bonus budget check counts it as spent
        (`money_budget.bonus_passes_budget`), so bonuses never take the room these rewards need.
        Approved work is in the ledger (its row is written with its approval) and rejected work pays
        nothing: neither is counted."""
        return rewards_owed(
            self, batch, Assignment.objects.filter(hit__batch=batch, status=Assignment.Status.SUBMITTED)
        )

    def block(self, worker, reason: str) -> None:
        raise NotImplementedError

    def extend(self, batch, hours: float) -> None:
        """Capability.EXTEND: keep the batch's work open `hours` longer at the provider."""
        raise NotImplementedError

    def section(self, batch, base_url: str = "") -> dict | None:
        """What the batch page's provider section shows (`section_template`); base_url is the
        site's address as the lead reached it."""
        return None

    def release_idle(self) -> int:
        """Beat: give back places held by idle participants; returns how many."""
        return 0

    def balance(self, batch) -> Decimal:
        """Capability.BALANCE: the account's available balance."""
        raise NotImplementedError

    def open_places(self, hit, total: int) -> int:
        """Capability.MORE_PLACES: make the published HIT's places at the provider `total`
        (idempotent: a retry opens nothing twice); returns the places the provider now has."""
        raise NotImplementedError
