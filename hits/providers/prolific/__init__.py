"""Prolific: client, config, plans, decisions, provider (adapters); sessions, sync, views, urls."""
