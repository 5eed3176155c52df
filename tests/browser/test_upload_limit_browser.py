"""An import upload over the server's limit is refused in the browser before a byte is sent:
behind gunicorn the server's refusal closes the connection, which a browser may show as
"connection reset" instead of the "File too large" page (static/js/upload_limit.js)."""

import pytest

from annotation.models import Dataset
from tests.conftest import DEMO_ROSE, PASSWORD

from .conftest import login, submits, watch_submits

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [390, 1280])
def test_a_file_over_the_limit_is_refused_before_sending(live_server, browser, shoot, lead, settings, width):
    settings.IMPORT_UPLOAD_MAX_BYTES = 256 * 1024  # the demo file (about 60 KB) fits, 300 KB does not
    page = browser.new_page(viewport={"width": width, "height": 800})
    login(page, live_server.url, lead.username, PASSWORD)
    url = f"{live_server.url}/datasets/import/"
    page.goto(url)
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.fill("#id_name", "too-big")
    page.set_input_files(
        "#id_file", files=[{"name": "big.jsonl", "mimeType": "application/x-ndjson", "buffer": b"x" * 300 * 1024}]
    )
    note = page.locator(".upload-too-large")
    note.wait_for()  # told on choosing the file
    expected = "The file is 300.0 KB; the limit here is 256.0 KB. Nothing was sent. Use the import_dataset command for larger files."
    assert note.inner_text() == expected and note.get_attribute("role") == "alert"
    watch_submits(page)
    page.click("button:text('Import')")
    assert submits(page) == (1, 0)  # the submission was cancelled: nothing goes
    assert posts == [] and page.url == url and note.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shoot(page, f"import-too-large-{width}")

    # A file that fits: the message goes, the import runs.
    page.set_input_files("#id_file", str(DEMO_ROSE))
    assert not note.is_visible()
    page.click("button:text('Import')")
    page.wait_for_selector(".messages li")
    assert Dataset.objects.filter(name="too-big").exists() and len(posts) == 1


def panel_batch_page(live_server, browser, lead, width):
    """An open panel batch and its page, signed in as the lead, at `width` px."""
    from tests.test_panel import open_panel

    batch = open_panel()
    page = browser.new_page(viewport={"width": width, "height": 800})
    login(page, live_server.url, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/batches/{batch.pk}/")
    return batch, page


@pytest.mark.parametrize("width", [390, 1280])
def test_a_participant_list_over_the_limit_is_refused_before_sending(
    live_server, browser, shoot, lead, settings, width
):
    """The panel's participant-ids file (REQUEST_MAX_BYTES: not an import, no command to name)."""
    from hits.models import Batch

    settings.REQUEST_MAX_BYTES = 64 * 1024
    batch, page = panel_batch_page(live_server, browser, lead, width)
    url = page.url
    wide = page.evaluate("document.documentElement.scrollWidth")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.set_input_files(
        "#panel-ids-file", files=[{"name": "ids.txt", "mimeType": "text/plain", "buffer": b"P\n" * 50 * 1024}]
    )
    note = page.locator(".upload-too-large")
    note.wait_for()
    expected = "The file is 100.0 KB; the limit here is 64.0 KB. Nothing was sent. Choose a smaller file."
    assert note.inner_text() == expected and note.get_attribute("role") == "alert"
    watch_submits(page)
    page.click("#panel-ids-save")
    assert submits(page) == (1, 0)
    assert posts == [] and page.url == url and note.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") == wide, wide  # the note widens nothing
    note.scroll_into_view_if_needed()
    shoot(page, f"panel-ids-too-large-{width}")

    # A list that fits: the message goes, the list is stored.
    page.set_input_files(
        "#panel-ids-file", files=[{"name": "ids.txt", "mimeType": "text/plain", "buffer": b"P1\nP2\n"}]
    )
    assert not note.is_visible()
    page.click("#panel-ids-save")
    page.wait_for_selector("#panel-listed")
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ["P1", "P2"] and len(posts) == 1


@pytest.mark.parametrize("width", [390, 1280])
def test_a_participant_list_over_the_views_own_bound_is_refused_before_sending(
    live_server, browser, shoot, lead, width
):
    """The view takes a list file of at most 800,000 bytes (10,000 ids); the form checked only
    REQUEST_MAX_BYTES (2 MiB), so a 1 MB file was sent and then refused. Now the browser refuses
    it on choosing it in the server's words, and the two agree at the byte: a file of exactly
    the bound is sent and stored, one byte more is not sent."""
    from hits.models import Batch

    batch, page = panel_batch_page(live_server, browser, lead, width)
    url = page.url
    wide = page.evaluate("document.documentElement.scrollWidth")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    note = page.locator(".upload-too-large")

    def choose(content: bytes) -> None:
        page.set_input_files(
            "#panel-ids-file", files=[{"name": "ids.txt", "mimeType": "text/plain", "buffer": content}]
        )

    choose(b"P\n" * 512 * 1024)  # 1 MiB: under 2 MiB, over the view's bound
    note.wait_for()
    expected = "The file is 1.0 MB; the limit here is 781.2 KB (10,000 ids). Nothing was sent. Choose a smaller file."
    assert note.inner_text() == expected and note.get_attribute("role") == "alert"
    watch_submits(page)
    page.click("#panel-ids-save")
    assert submits(page) == (1, 0)
    assert posts == [] and page.url == url and note.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") == wide, wide
    note.scroll_into_view_if_needed()
    shoot(page, f"panel-ids-over-bound-{width}")

    ids = [f"{n:05d}".ljust(64, "x") for n in range(10_000)]  # the longest ids allowed, 80 bytes a line
    exact = "".join(pid.ljust(78) + "\r\n" for pid in ids).encode()
    choose(exact + b"\n")
    page.wait_for_function("document.querySelector('.upload-too-large').textContent.includes('781.3 KB')")
    assert note.inner_text().startswith("The file is 781.3 KB; the limit here is 781.2 KB (10,000 ids).")
    choose(exact)
    assert not note.is_visible()
    page.click("#panel-ids-save")
    page.wait_for_selector("#panel-listed")
    assert Batch.objects.get(pk=batch.pk).provider_config["allowed_ids"] == ids and len(posts) == 1


@pytest.mark.parametrize("width", [390, 1280])
def test_a_metric_file_over_its_own_bound_is_refused_before_sending(
    live_server, browser, shoot, lead, settings, tmp_path, width
):
    """The Metrics upload takes at most 50 MiB (read into memory), below the import limit: a
    60 MB file is refused on choosing it, in the words of the server's refusal."""
    from django.urls import reverse

    from tests.crowd_data import demo_dataset

    settings.IMPORT_UPLOAD_MAX_BYTES = 1024**3
    dataset = demo_dataset()
    big = tmp_path / "scores.jsonl"
    with big.open("wb") as f:  # sparse: 60 MB on the page, nothing on the disk
        f.truncate(60 * 1024 * 1024)
    page = browser.new_page(viewport={"width": width, "height": 800})
    login(page, live_server.url, lead.username, PASSWORD)
    url = live_server.url + reverse("dashboard_metrics", args=[dataset.pk])
    page.goto(url)
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.set_input_files("#id_metrics_file", str(big))
    note = page.locator(".upload-too-large")
    note.wait_for()
    expected = (
        "The file is 60.0 MB; the limit here is 50.0 MB. Nothing was sent. "
        "Use the import_metric_scores command for larger files."
    )
    assert note.inner_text() == expected and note.get_attribute("role") == "alert"
    watch_submits(page)
    page.click("#metrics-upload button[type=submit]")
    assert submits(page) == (1, 0)
    assert posts == [] and page.url == url and note.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shoot(page, f"metrics-too-large-{width}")
