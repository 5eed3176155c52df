"""In a real browser: the sign-in limit message, and pages that keep working under the CSP
(no inline script without the nonce is blocked on the way)."""

import pytest

from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_limit_message_and_no_csp_violations(live_server, browser, shoot, lead, settings):
    settings.AXES_FAILURE_LIMIT = 3
    page = browser.new_page(viewport={"width": 900, "height": 700})
    violations = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    for password in ("wrong", "wrong", "wrong", PASSWORD):
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", lead.username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
    page.locator("text=Too many failed sign-ins").wait_for()
    shoot(page, "login-rate-limited")
    assert "/accounts/login/" in page.url
    assert not violations, violations
