#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from config.dispatch import finish_background

    try:
        execute_from_command_line(sys.argv)
        finish_background()  # a command's background tasks (embedded mode) would die with it
    except ImproperlyConfigured as exc:  # a setting from the environment: the message says which and why
        sys.exit(f"Configuration error: {exc}")


if __name__ == "__main__":
    main()
