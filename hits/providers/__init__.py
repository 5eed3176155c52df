"""Crowd providers: `inhouse` (our own crowd) and one folder each for `mturk/`, `prolific/` and
`panel/`, holding its client, option schema, models, provider (the adapter the services call
through hits.provider_interface), sync, sessions, views and urls; `sync` is the one entry point
of *Sync now*, the API and the periodic task. The adapter modules never import the services that
call them (an import-linter contract); the sync, session and page modules do, which is why the
interface and the registry live below the services, in hits/provider_interface/.
"""
