"""Whether a refusal made before the view (a size limit, a rate limit) is answered as a page or
as JSON: a browser's form post or link reads a page, the API and the pages' own scripts read JSON."""


def wants_page(request) -> bool:
    """A browser's navigation (a form post, a link), not the API nor a script's fetch (whose
    Accept does not ask for HTML): the refusal is a page, not JSON text on a blank screen."""
    return not request.path_info.startswith("/api/") and "text/html" in request.headers.get("Accept", "")
