"""The interface every crowd provider implements.

The app's services own the data (batches, HITs, assignments, judgments, the ledger) and call
a provider only for what happens at the provider: publishing, paying, blocking, stopping.
A provider raises ProviderError with a message for the lead; it never leaves our data
half-written (the services write our side only after the provider call succeeded, and every
call is idempotent so a retry finishes what a crash interrupted).
"""
from decimal import Decimal


class ProviderError(Exception):
    """The provider refused or could not be reached; the message is for the lead."""


class CrowdProvider:
    name = "base"
    label = "Provider"

    def fee(self, amount: Decimal, assignments_per_hit: int) -> Decimal:
        """The provider's fee on a payment of `amount` (reward or bonus)."""
        return Decimal("0.00")

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

    def send_bonus(self, assignment, amount: Decimal, reason: str, token: str) -> None:
        raise NotImplementedError

    def block(self, worker, reason: str) -> None:
        raise NotImplementedError
