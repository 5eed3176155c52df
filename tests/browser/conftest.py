"""Playwright driving Debian's Chromium (/usr/bin/chromium); screenshots land in test-artifacts/."""

import json
import os
import threading
import time
from pathlib import Path

import pytest

from .axe_scan import AXE, Scanner, instrument

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
BROWSER_TIMEOUT_MS = 60_000  # each wait's limit (page.set_default_timeout)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: run scripts/system_setup.sh")
    if not AXE.exists():
        pytest.fail(f"axe-core not found at {AXE}: run scripts/system_setup.sh (npm ci in tests/browser/axe)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        instrument(browser, lambda: _SCANNER[0])
        generous_waits(browser)
        yield browser
        browser.close()


_SCANNER = [Scanner()]


def generous_waits(browser):
    """Every context a test makes, and every expect(), waits BROWSER_TIMEOUT_MS by default (pages of
    their own contexts waited 15 s and expect() 5 s, which a busy machine's answer, a live estimate's
    fetch or an axe scan can take)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=BROWSER_TIMEOUT_MS)
    new_context, new_page = browser.new_context, browser.new_page

    def make_context(**kwargs):
        context = new_context(**kwargs)
        context.set_default_timeout(BROWSER_TIMEOUT_MS)
        context_new_page = context.new_page
        context.new_page = lambda **kw: csp_safe_waits(context_new_page(**kw))
        context.on("page", csp_safe_waits)  # pages a page opens too
        return context

    def make_page(**kwargs):
        page = csp_safe_waits(new_page(**kwargs))
        page.context.set_default_timeout(BROWSER_TIMEOUT_MS)
        return page

    browser.new_context = make_context
    browser.new_page = make_page


@pytest.fixture(autouse=True)
def axe_scan():
    """axe-core over every page this test opens: 0 WCAG 2.1 A/AA violations (axe_scan.py)."""
    scanner = _SCANNER[0] = Scanner()
    yield scanner
    scanner.finish()
    if scanner.found:
        pytest.fail("WCAG 2.1 A/AA violations (axe-core):\n" + "\n".join(scanner.found), pytrace=False)


@pytest.fixture(autouse=True)
def server_quiet(request):
    """After the test, before its database is flushed: the live server finishes the requests a
    closing page sent (activity.js's beacon on pagehide, a last autosave) and the embedded
    server's background tasks (config.dispatch's "task-..." threads). A request still writing
    deadlocked the flush (one run in a few of tests/browser/test_drafts_browser.py). The browser's
    contexts are closed first, so the server's idle keep-alive connections end rather than wait."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()
    time.sleep(0.2)  # the beacon leaves the closing page asynchronously
    start = time.monotonic()
    for thread in threading.enumerate():
        if thread.name.startswith("task-"):  # a recompute after a judge run waits its countdown first
            thread.join(timeout=max(0.0, start + 120 - time.monotonic()))
        elif "process_request_thread" in thread.name:
            thread.join(timeout=max(0.0, start + 3 - time.monotonic()))


def csp_safe_waits(page):
    """The page, its wait_for_function polling from outside the page (`_polling_wait_for_function`):
    every page of every context a test makes gets it, so no test's wait depends on the condition
    being true at once (Playwright's own is refused by the site's CSP otherwise, now and then)."""
    page.wait_for_function = lambda expression, **kw: _polling_wait_for_function(page, expression, **kw)
    return page


def _polling_wait_for_function(page, expression: str, timeout: float = BROWSER_TIMEOUT_MS, **_):
    """page.wait_for_function that also works under the site's CSP: Playwright's own polls by
    evaluating a string in the page, which `script-src` without 'unsafe-eval' refuses as soon
    as the condition is not true at once. page.evaluate goes through DevTools, which the CSP
    does not govern."""
    import time

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout / 1000
    while True:
        if page.evaluate(f"() => !!({expression})"):
            return True
        if time.monotonic() > deadline:
            raise PlaywrightTimeout(f"wait_for_function: {expression!r} not true after {timeout:.0f} ms")
        page.wait_for_timeout(50)


# Counts, in the page, the form submissions started (`seen`, a listener before the page's own) and
# those no script of the page cancelled (`sent`, a listener after them: what the browser goes on to send).
# The counts are kept in the tab's sessionStorage too, for the page a submission leads to.
WATCH_SUBMITS = """() => {
  window.submits = {seen: 0, sent: 0};
  const keep = () => sessionStorage.setItem("submits", JSON.stringify(window.submits));
  keep();
  window.addEventListener("submit", () => { window.submits.seen += 1; keep(); }, true);
  window.addEventListener("submit", (e) => { if (!e.defaultPrevented) window.submits.sent += 1; keep(); });
}"""


def watch_submits(page) -> None:
    """Count the page's form submissions from now on (read them with `submits`, or with
    `submits_kept` on the page they led to)."""
    page.evaluate(WATCH_SUBMITS)


def submits_kept(page) -> tuple[int, int]:
    """(seen, sent) of the page watch_submits ran in, read on the page its submission led to (same
    tab and site). For a page whose post is held on its way: Playwright's evaluate waits for the
    navigation a page started, so that page cannot be asked until its post is let go."""
    counts = json.loads(page.evaluate("() => sessionStorage.getItem('submits')") or "null")
    assert counts, f"{page.url}: watch_submits did not run in this tab"
    return counts["seen"], counts["sent"]


def submits(page, seen: int = 1) -> tuple[int, int]:
    """(seen, sent) once `seen` submissions have started. A submission a page refuses is told by its
    cancelled submit event, which is over when the click returns, where counting the POSTs after a
    fixed wait only hoped a wrong one would have left by then (a busy machine sends it later)."""
    _polling_wait_for_function(page, f"!window.submits || window.submits.seen >= {seen}")
    counts = page.evaluate("window.submits || null")
    assert counts, f"{page.url}: another page, so a submission went (watch_submits counts on the page it ran in)"
    return counts["seen"], counts["sent"]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    # Generous: a wait only lasts this long when something is wrong, and CI may run on a busy
    # machine, where a page's answer plus its axe scan can take several seconds.
    page.set_default_timeout(BROWSER_TIMEOUT_MS)
    page.wait_for_function = lambda expression, **kw: _polling_wait_for_function(page, expression, **kw)
    yield page
    context.close()


@pytest.fixture
def shoot():
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, name: str):
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def login(page, base_url: str, username: str, password: str):
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def answer_test_sheet(page, test, right: bool = True):
    """Answer the qualification sheet the page shows (a draw from the test's pool: hits.sheets),
    every fact right (or every fact wrong)."""
    truth = {f"{item.pk}:{acu}": present for item in test.items.all() for acu, present in item.answers.items()}
    for name in page.eval_on_selector_all("input[name^='ans-'][value='1']", "els => els.map(e => e.name)"):
        value = 1 if truth[name[4:]] == right else 0
        page.check(f"input[name='{name}'][value='{value}']")
