"""The in-house provider: workers are accounts of this app, so every provider action is a
change in our own database, made by the services; nothing is sent anywhere and no fee is due."""

from hits.provider_interface.base import CrowdProvider


class InHouseProvider(CrowdProvider):
    name = "inhouse"
    label = "In-house workers"

    def publish(self, batch) -> None:
        """In-house workers see published HITs as soon as the batch is marked published."""

    def stop(self, batch) -> None:
        """Nothing to tell anyone: handing out stops with the batch status."""

    def approve(self, assignment) -> None:
        """Payment to in-house workers is settled outside the app from the ledger."""

    def reject(self, assignment, feedback: str) -> None:
        """The worker sees the feedback on their work page."""

    def send_bonus(self, assignment, amount, reason: str, token: str, by=None) -> None:
        """Recorded in the ledger by the service."""

    def block(self, worker, reason: str) -> None:
        """A blocked in-house worker is simply given no more HITs."""
