"""Logging to whatever sys.stderr is when a record is written (not when logging was set up), so
a process that swaps its streams (a test runner's capture, a daemon) never logs to a closed one."""

import logging
import sys


class CurrentStderrHandler(logging.StreamHandler):
    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        """StreamHandler.__init__ assigns a stream; the current sys.stderr is always used."""
