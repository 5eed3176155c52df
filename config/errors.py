"""The base of every service refusal whose message is meant for the person who asked.

Services raise subclasses (an import error naming the file and line, a refused batch, a
provider that said no); the API answers them with 400 and the message, the pages show it.
"""


class ServiceError(Exception):
    """A refusal with a message for the lead: bad options, a wrong state, a provider's no."""
