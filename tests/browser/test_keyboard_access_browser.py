"""An accessibility and keyboard audit of the pages crowd workers use most (the ACU task sheet, a
rating task, sign-in), as a lab would run it: a keyboard-only worker finishes a sheet with Tab,
arrows, Space and Enter alone (no letter shortcut, no mouse) and the answers are stored; a screen
reader hears each choice in a group named by its fact, with its pressed state; the keys are shown
without opening the instructions; the focus ring and the chosen states keep WCAG AA contrast and
the chosen state is not told by colour alone; a failed sign-in is announced and tied to its
fields; and a 390 px phone at 200% zoom (a 195 CSS px viewport) never scrolls the page sideways."""

import pytest

from hits.models import Assignment
from hits.services import handout
from hits.services.qualification import build_test
from hits.services.submission import task_token
from hits.views.worker import inhouse_worker

from ..conftest import PASSWORD
from ..crowd_data import demo_dataset, published_batch
from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# WCAG relative luminance and contrast of two computed colours ("rgb(...)" / "rgba(...)"), in the page.
CONTRAST_JS = """
function lum(c) {
  const m = c.match(/[\\d.]+/g).map(Number);
  const [r, g, b] = m.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a, b) { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); }
function backdrop(el) {  // the first opaque background at or behind el
  for (let e = el; e; e = e.parentElement) {
    const bg = getComputedStyle(e).backgroundColor;
    const m = bg.match(/[\\d.]+/g).map(Number);
    if (m.length < 4 || m[3] > 0.9) return bg;
  }
  return "rgb(255, 255, 255)";
}
"""


def contrast_of(page, selector: str, what: str) -> float:
    """`what`: "text" (the element's colour on its background) or "ring" (its focus outline on the
    background around it, the outline standing off the element)."""
    return page.evaluate(
        "([sel, what]) => {"
        + CONTRAST_JS
        + """
        const el = document.querySelector(sel);
        const cs = getComputedStyle(el);
        if (what === "text") return contrast(cs.color, backdrop(el));
        if (cs.outlineStyle === "none" || parseFloat(cs.outlineWidth) < 2) return 0;
        return contrast(cs.outlineColor, backdrop(el.parentElement));
        }""",
        [selector, what],
    )


def focused(page) -> str:
    """What has the focus: the row's fact (or "Summary N") and the button's name, or the element's id."""
    return page.evaluate(
        """() => { const e = document.activeElement; const row = e.closest('.acu-row');
        if (!row) return e.id || e.tagName;
        const name = e.getAttribute('aria-label') || e.textContent.replace(/^\\d/, '').trim();
        return row.querySelector('.acu-fact').textContent.trim().split('\\n')[0].trim() + ' | ' + name; }"""
    )


def open_task(browser, live_server, worker, batch, width=1280, height=900):
    assignment = handout.next_assignment(inhouse_worker(worker), batch)
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{live_server.url}/task/{task_token(assignment)}/")
    page.wait_for_selector(".acu-row.current")
    return page, assignment


def test_a_keyboard_only_worker_finishes_the_sheet_with_tab_arrows_and_space(live_server, browser, shoot, worker):
    page, assignment = open_task(browser, live_server, worker, published_batch())
    facts = page.eval_on_selector_all(".acu-row .acu-fact", "els => els.map(e => e.lastChild.textContent.trim())")
    rows = len(facts)
    assert rows >= 4
    # The keys are on the page, not only inside the folded instructions.
    assert page.locator("#key-hint").is_visible()
    # Each fact is a group named by the fact, its two choices toggle buttons with a pressed state.
    first = page.get_by_role("group", name=facts[0])
    assert first.get_by_role("button", name="1 Present", exact=True, pressed=False).count() == 1
    assert first.get_by_role("button", name="2 Not present", exact=True, pressed=False).count() == 1

    # The sheet opens on the first fact's Present; Space marks it and the focus moves to the next fact.
    assert focused(page) == f"Fact 1: {facts[0]} | Present"
    page.keyboard.press("Space")
    assert first.get_by_role("button", name="1 Present", exact=True, pressed=True).count() == 1
    assert focused(page) == f"Fact 2: {facts[1]} | Present"
    # → moves to Not present (choosing nothing), Space chooses it.
    page.keyboard.press("ArrowRight")
    assert focused(page) == f"Fact 2: {facts[1]} | Not present"
    assert page.inner_text("#progress") == f"1 of {rows} answered"
    page.keyboard.press("Space")
    assert focused(page) == f"Fact 3: {facts[2]} | Present"
    # One Tab stop per fact: Shift+Tab goes back to fact 2, onto its chosen answer; Enter changes it.
    page.keyboard.press("Shift+Tab")
    assert focused(page) == f"Fact 2: {facts[1]} | Not present"
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    assert (
        page.get_by_role("group", name=facts[1])
        .get_by_role("button", name="1 Present", exact=True, pressed=True)
        .count()
        == 1
    )
    assert focused(page) == f"Fact 3: {facts[2]} | Present"
    shoot(page, "a11y-task-keyboard")
    for i in range(2, rows):  # the rest: present, not present, ... by → and Space alone
        if i % 2:
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Space")
    assert page.inner_text("#progress") == f"{rows} of {rows} answered"
    assert page.evaluate("document.activeElement.id") == "submit-task"
    page.keyboard.press("Enter")
    page.wait_for_selector("#task-notice:has-text('your answers are saved')")
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    marks = [j.present for j in assignment.judgments.order_by("acu__sentence__position", "acu__position")]
    assert marks == [True, True] + [i % 2 == 0 for i in range(2, rows)]
    page.context.close()


def test_the_focus_ring_and_the_chosen_answers_keep_their_contrast_and_a_mark_besides_colour(
    live_server, browser, shoot, worker
):
    page, _ = open_task(browser, live_server, worker, published_batch())
    page.keyboard.press("y")  # fact 1 present
    page.keyboard.press("n")  # fact 2 not present
    page.keyboard.press("ArrowRight")  # fact 3: the focus on Not present, by keyboard
    present = ".acu-row:nth-child(1) .choice.yes"
    absent = ".acu-row:nth-child(2) .choice.no"
    # WCAG 1.4.11: a focus indicator at least 3:1 against what is around it (was amber on white, 1.9:1).
    ring = contrast_of(page, ":focus-visible", "ring")
    assert ring >= 3, f"focus ring contrast {ring:.2f}:1"
    for chosen in (present, absent):
        assert page.locator(chosen).get_attribute("aria-pressed") == "true"
        text = contrast_of(page, chosen, "text")
        assert text >= 4.5, f"{chosen}: text contrast {text:.2f}:1"
    # Chosen is also a tick, which an unchosen button has not (WCAG 1.4.1: not by colour alone).
    marks = page.evaluate(
        """() => [...document.querySelectorAll('.acu-row:nth-child(-n+2) .choice')].map(
        b => [b.getAttribute('aria-pressed'), getComputedStyle(b, '::before').content])"""
    )
    assert [m[0] for m in marks] == ["true", "false", "false", "true"]
    assert all("\u2713" in content for pressed, content in marks if pressed == "true")
    assert all(content in ("none", "normal") for pressed, content in marks if pressed == "false")
    # The tick is not part of the button's name: it is still "Present", now pressed.
    assert page.get_by_role("button", name="1 Present", exact=True, pressed=True).count() == 1
    for selector in ("#progress", "#key-hint", ".acu-row:nth-child(4) .acu-fact", ".reference-text"):
        text = contrast_of(page, selector, "text")
        assert text >= 4.5, f"{selector}: text contrast {text:.2f}:1"
    shoot(page, "a11y-task-states")
    page.context.close()


def test_a_rating_task_by_tab_arrows_and_space(live_server, browser, shoot, worker):
    batch = published_batch(demo_dataset(), protocol="ref_free", rating_round="a11y", gold_share=0)
    page, assignment = open_task(browser, live_server, worker, batch)
    rows = page.locator(".rate-row").count()
    assert rows >= 2
    group = page.get_by_role("group", name="Rating of summary 1", exact=True)
    assert group.get_by_role("button", name="1 (worst)", pressed=False).count() == 1
    assert focused(page).endswith("| 1 (worst)")
    for i in range(rows):  # summary i gets 1 + i % 5: → that many times, then Space
        for _ in range(i % 5):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Space")
    assert (
        page.get_by_role("group", name="Rating of summary 2", exact=True)
        .get_by_role("button", name="2", exact=True, pressed=True)
        .count()
    )
    assert page.inner_text("#progress") == f"{rows} of {rows} rated"
    shoot(page, "a11y-rating-keyboard")
    page.keyboard.press("Enter")
    page.wait_for_selector("#task-notice:has-text('your answers are saved')")
    order = page.evaluate("[...document.querySelectorAll('.rate-row')].map(r => Number(r.dataset.acu))")
    scores = dict(assignment.ratings.values_list("summary_id", "score"))
    assert [scores[pk] for pk in order] == [1 + i % 5 for i in range(rows)]
    page.context.close()


def test_a_failed_sign_in_is_announced_and_tied_to_its_fields(live_server, page, shoot, worker):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", worker.username)
    page.fill("#id_password", "not-" + PASSWORD)
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    assert "did not match" in alert.inner_text()
    for field in ("Username", "Password"):
        box = page.get_by_role("textbox", name=field)
        assert box.get_attribute("aria-invalid") == "true"
        assert box.get_attribute("aria-describedby") == alert.get_attribute("id")
    assert page.get_by_role("textbox", name="Username").input_value() == worker.username  # not typed again
    shoot(page, "a11y-login-error")
    page.fill("#id_password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector("h1:text('My work')")


@pytest.mark.parametrize("kind", ["acu", "rating"])
def test_a_phone_at_200_percent_zoom_never_scrolls_sideways(live_server, browser, shoot, worker, kind):
    options = {"protocol": "ref_free", "rating_round": "zoom", "gold_share": 0} if kind == "rating" else {}
    batch = published_batch(demo_dataset(), **options)
    page, _ = open_task(browser, live_server, worker, batch, width=195, height=422)  # 390 x 844 at 200%
    page.keyboard.press("1" if kind == "acu" else "5")
    wide = page.evaluate(
        """() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 195)
        .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""
    )
    width = page.evaluate("document.documentElement.scrollWidth")
    shoot(page, f"a11y-zoom-{kind}")
    assert width <= 195, f"{kind} task at 200% zoom scrolls sideways ({width}px): {wide}"
    page.context.close()


def test_sign_in_my_work_and_the_qualification_sheet_at_200_percent_zoom(live_server, browser, shoot, worker):
    dataset = demo_dataset()
    test = build_test(dataset=dataset, name="ACU matching qualification", items=2, pass_score=0.8)
    published_batch(dataset, qualification_test=test)
    context = browser.new_context(viewport={"width": 195, "height": 422})  # 390 x 844 at 200%
    page = context.new_page()

    def fits(name):
        width = page.evaluate("document.documentElement.scrollWidth")
        shoot(page, f"a11y-zoom-{name}")
        assert width <= 195, f"{name} at 200% zoom scrolls sideways ({width}px)"

    page.goto(f"{live_server.url}/accounts/login/")
    fits("login")
    login(page, live_server.url, worker.username, PASSWORD)
    page.wait_for_selector("h1:text('My work')")
    fits("my-work")  # was 361 px: "$0.00 earned (approved work and bonuses)" kept on one line
    page.get_by_role("link", name="Take the test").click()
    page.wait_for_selector("button:text('Submit the test')")
    fits("qualification")
    context.close()
