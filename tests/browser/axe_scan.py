"""axe-core (npm registry, installed by scripts/system_setup.sh into tests/browser/axe/) over every page the
browser tests open, at 0 WCAG 2.1 A/AA violations.

Every context the `browser` fixture makes gets axe as an init script (DevTools injects it, so the site's CSP
does not govern it). A page becomes "to scan" each time its main frame commits a navigation; it is scanned as
it stands the next time the test acts on it (goto, click, locator, ...) and once more when the test ends. What
a test sees when it first touches a page is what a person sees: every page gets scanned in the state the test
found it in, and a page left by navigation gets scanned before it goes.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

# Page methods after which (or before which) the page the test looks at is the one on screen.
ACTIONS = [
    "goto",
    "reload",
    "go_back",
    "go_forward",
    "locator",
    "get_by_role",
    "get_by_text",
    "get_by_label",
    "get_by_placeholder",
    "get_by_test_id",
    "get_by_title",
    "click",
    "dblclick",
    "tap",
    "fill",
    "type",
    "press",
    "check",
    "uncheck",
    "select_option",
    "set_input_files",
    "hover",
    "focus",
    "text_content",
    "inner_text",
    "inner_html",
    "input_value",
    "is_visible",
    "is_checked",
    "is_enabled",
    "content",
    "title",
    "query_selector",
    "query_selector_all",
    "screenshot",
    "wait_for_selector",
    "eval_on_selector",
    "eval_on_selector_all",
    "set_viewport_size",
]

RUN = """async (tags) => {
  if (typeof axe === 'undefined') return null;
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').split('\\n').slice(1, 2).join('')),
    count: v.nodes.length,
  }));
}"""


class Scanner:
    """The pages of one test run; `found` lists the violations met, one line each."""

    def __init__(self):
        self.found: list[str] = []
        self.pages: list = []
        self.scanned: set[tuple[str, str]] = set()

    def watch_context(self, context):
        context.add_init_script(path=str(AXE))
        context.on("page", self.watch_page)
        for page in context.pages:
            self.watch_page(page)
        close = context.close

        def scan_then_close(*args, **kwargs):
            for page in context.pages:
                if getattr(page, "_axe_watched", False) and not page.is_closed():
                    page._axe_scan()
            # What a page sends as it closes (the activity beacon on pagehide) would reach the live
            # server while the test's teardown empties the database (a deadlock seen in CI): drop it.
            with contextlib.suppress(Exception):  # a context already closing: nothing more to send
                context.route("**/*", lambda route: route.abort())
            return close(*args, **kwargs)

        context.close = scan_then_close

    def watch_page(self, page):
        if getattr(page, "_axe_watched", False):
            return
        page._axe_watched = True
        page._axe_dirty = False
        self.pages.append(page)
        evaluate = page.evaluate

        def committed(frame):
            if frame == page.main_frame:
                page._axe_dirty = True

        page.on("framenavigated", committed)

        def scan():
            if not page._axe_dirty or page.is_closed():
                return
            url = page.url
            if not url.startswith(("http://", "https://")):
                page._axe_dirty = False
                return
            try:
                page.wait_for_load_state("load")  # the page's own timeout: a busy machine's loads take seconds
                violations = evaluate(RUN, TAGS)
            except Exception:  # noqa: BLE001 - the page navigated away mid-scan: the next page gets its turn
                return
            if violations is None:  # axe missing on this document (not yet injected): try at the next action
                return
            page._axe_dirty = False
            for v in violations:
                key = (url.split("?")[0], v["id"])
                if key in self.scanned:
                    continue
                self.scanned.add(key)
                where = "; ".join(v["nodes"])
                self.found.append(f"{url}: {v['id']} ({v['impact']}, {v['count']} elements) {v['help']}: {where}")

        page._axe_scan = scan
        for name in ACTIONS:
            original = getattr(page, name)

            def wrapped(*args, _original=original, **kwargs):
                scan()
                return _original(*args, **kwargs)

            setattr(page, name, wrapped)

    def finish(self):
        for page in self.pages:
            if not page.is_closed():
                page._axe_scan()
        self.pages.clear()


def instrument(browser, current):
    """Make every context and page of `browser` report to `current()`, the scanner of the running test."""
    new_context, new_page = browser.new_context, browser.new_page

    def make_context(**kwargs):
        context = new_context(**kwargs)
        current().watch_context(context)
        return context

    def make_page(**kwargs):
        page = new_page(**kwargs)
        current().watch_context(page.context)
        return page

    browser.new_context = make_context
    browser.new_page = make_page
