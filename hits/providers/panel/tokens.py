"""Signed links of a panel study (django.core.signing, the site's SECRET_KEY).

- The entry token is per study: the study link the lead pastes into the panel carries it, so
  only someone given that link can arrive (a made-up URL for a batch is refused). It holds the
  batch id and is signed with a salt naming the batch, so it opens no other batch.
- The participant token names one participant id of one study: after the entry the
  participant's link carries it next to the id, and a token replayed with another id is refused.
"""

import re

from django.core import signing

from hits.providers.panel.config import PARTICIPANT_ID

ENTRY_SALT = "hits.panel.entry:{batch}"
PARTICIPANT_SALT = "hits.panel.participant:{batch}"


class TokenRefused(Exception):
    """The link is not valid; the message is for the participant."""


def _signer(salt: str, batch_id: int) -> signing.Signer:
    """Without a timestamp: a study's link (and a participant's) is the same every time it is shown."""
    return signing.Signer(salt=salt.format(batch=batch_id))


def entry_token(batch_id: int) -> str:
    return _signer(ENTRY_SALT, batch_id).sign_object({"b": batch_id})


def check_entry(batch_id: int, token: str) -> None:
    try:
        data = _signer(ENTRY_SALT, batch_id).unsign_object(token or "")
        ok = isinstance(data, dict) and data.get("b") == batch_id
    except signing.BadSignature:
        ok = False
    if not ok:
        raise TokenRefused("This study link is not valid. Open the study again from your panel.")


def check_participant_id(participant_id: str) -> str:
    participant_id = (participant_id or "").strip()
    if not re.fullmatch(PARTICIPANT_ID, participant_id):
        raise TokenRefused(
            "The link carries no valid participant id (letters, digits and . _ - @ : +, at most 64, "
            "not beginning with - + @). "
            "Open the study again from your panel."
        )
    return participant_id


def participant_token(batch_id: int, participant_id: str) -> str:
    return _signer(PARTICIPANT_SALT, batch_id).sign_object({"b": batch_id, "p": participant_id})


def check_participant(batch_id: int, participant_id: str, token: str) -> str:
    """The participant id, when the token was made for exactly this id and study."""
    participant_id = check_participant_id(participant_id)
    try:
        data = _signer(PARTICIPANT_SALT, batch_id).unsign_object(token or "")
    except signing.BadSignature:
        raise TokenRefused("This session link is not valid. Open the study again from your panel.") from None
    if not isinstance(data, dict) or data.get("b") != batch_id:
        raise TokenRefused("This session link is not valid. Open the study again from your panel.")
    if data.get("p") != participant_id:
        raise TokenRefused("This session link was made for another participant id. Open the study from your panel.")
    return participant_id
