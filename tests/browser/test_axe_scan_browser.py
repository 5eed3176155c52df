"""The accessibility scan itself (axe_scan.py): it reaches pages opened by any context and reports a
violation (here an image without a text alternative) with its page and rule."""

import pytest

pytestmark = [pytest.mark.browser]

BAD = "<!doctype html><html lang='en'><title>Self-test</title><main><img src='chart.png'></main>"
GOOD = "<!doctype html><html lang='en'><title>Self-test</title><main><img src='chart.png' alt='A chart'></main>"


def test_the_scan_reports_a_violation_and_passes_a_clean_page(browser, axe_scan):
    context = browser.new_context()
    page = context.new_page()
    page.route("http://selftest.invalid/bad", lambda route: route.fulfill(content_type="text/html", body=BAD))
    page.route("http://selftest.invalid/good", lambda route: route.fulfill(content_type="text/html", body=GOOD))
    page.route("http://selftest.invalid/chart.png", lambda route: route.fulfill(status=404))
    page.goto("http://selftest.invalid/bad")
    page.goto("http://selftest.invalid/good")  # the bad page is scanned before it is left
    context.close()  # and the good one before the context closes
    assert len(axe_scan.found) == 1 and axe_scan.found[0].startswith("http://selftest.invalid/bad: image-alt")
    axe_scan.found.clear()  # the violation was planted: the test itself passes
