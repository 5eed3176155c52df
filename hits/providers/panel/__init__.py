"""A participant panel (CloudResearch Connect, SONA, Qualtrics, a mailing list): a study link
and a completion code; config, tokens, places and provider are adapters; sessions, payouts,
views and urls hold the participant's way and the lead's lists."""
