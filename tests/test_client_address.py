"""The client's address as every per-address bound counts it (issue 45 item 1, issue 42 item 3):
X-Forwarded-For is read only from TRUSTED_PROXIES, so a client that reaches the app directly
cannot choose its address (nor pass for HTTPS with X-Forwarded-Proto); an IPv6 address counts by
its /64. Before, with BEHIND_PROXY=1 the last X-Forwarded-For entry was taken from anyone, and
every IPv6 address counted on its own."""

import itertools

import pytest
from django.test import RequestFactory
from django.urls import reverse

from config.ratelimit import client_address

from .crowd_data import published_batch

# The per-minute counts below must not straddle a window on a busy machine.
pytestmark = [pytest.mark.portable, pytest.mark.usefixtures("still_ratelimit_clock")]

PROXY_NET = "172.29.45.0/24"
PROXY = "172.29.45.7"
_unique = itertools.count(1)


@pytest.fixture
def behind_proxy(settings):
    """A deployment with its proxy on PROXY_NET (the old code read X-Forwarded-For whenever the
    HTTPS header of a proxy was set, so this is set as well)."""
    settings.TRUSTED_PROXIES = [PROXY_NET]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


def address_of(**meta) -> str:
    return client_address(RequestFactory().get("/", **meta))


def test_a_direct_client_is_its_peer_address_whatever_it_forwards(behind_proxy):
    assert address_of(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="198.51.100.1") == "203.0.113.9"
    assert address_of(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="198.51.100.1, 10.0.0.1") == "203.0.113.9"


def test_the_trusted_proxy_names_the_client_and_a_client_cannot_prepend_its_choice(behind_proxy, settings):
    assert address_of(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.1") == "198.51.100.1"
    # The client sent "X-Forwarded-For: 1.2.3.4"; the proxy appended the address it saw.
    assert address_of(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.1") == "198.51.100.1"
    # Two proxies, both trusted: the first untrusted entry from the right is the client.
    settings.TRUSTED_PROXIES = [PROXY_NET, "10.8.0.0/16"]
    assert address_of(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.1, 10.8.0.2") == "198.51.100.1"
    # Without a header, or with one that is no address, the proxy's own address.
    assert address_of(REMOTE_ADDR=PROXY) == PROXY
    assert address_of(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="not-an-address") == PROXY
    assert address_of(REMOTE_ADDR="junk") == ""


def test_ipv6_addresses_count_by_their_64(behind_proxy):
    one = address_of(REMOTE_ADDR="2001:db8:45:1:aaaa::1")
    assert one == address_of(REMOTE_ADDR="2001:db8:45:1:ffff:ffff:ffff:ffff") == "2001:db8:45:1::"
    assert address_of(REMOTE_ADDR="2001:db8:45:2::1") != one
    assert address_of(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="[2001:db8:45:1::9]:4431") == one
    assert address_of(REMOTE_ADDR="::ffff:198.51.100.4") == "198.51.100.4"


def _next_task_codes(client, metas) -> list[int]:
    return [client.post(reverse("work_next"), **meta).status_code for meta in metas]


@pytest.mark.django_db
def test_a_direct_client_cannot_escape_a_per_address_bound_by_rotating_the_header(
    behind_proxy, client, make_user, settings
):
    settings.RATE_LIMIT_WORK_PER_MINUTE = (1000, 3)
    published_batch()
    client.force_login(make_user("rotating-worker", "worker"))
    direct = f"203.0.113.{next(_unique)}"
    rotating = [{"REMOTE_ADDR": direct, "HTTP_X_FORWARDED_FOR": f"198.51.100.{i}"} for i in range(1, 6)]
    assert _next_task_codes(client, rotating) == [302, 302, 302, 429, 429]
    # Through the proxy, a client that prepends its own choice is still counted by what the proxy saw.
    real = f"198.18.0.{next(_unique)}"
    spoofing = [{"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": f"192.0.2.{i}, {real}"} for i in range(1, 6)]
    assert _next_task_codes(client, spoofing) == [302, 302, 302, 429, 429]
    # Different clients through the proxy are counted apart.
    others = [{"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": f"198.18.1.{next(_unique)}"} for _ in range(4)]
    assert _next_task_codes(client, others) == [302] * 4


@pytest.mark.django_db
def test_addresses_of_one_ipv6_64_share_a_per_address_bound(client, make_user, settings):
    settings.RATE_LIMIT_WORK_PER_MINUTE = (1000, 3)
    published_batch()
    client.force_login(make_user("v6-worker", "worker"))
    prefix = f"2001:db8:{next(_unique):x}:1"
    same_64 = [{"REMOTE_ADDR": f"{prefix}:{i:x}::{i}"} for i in range(1, 6)]
    assert _next_task_codes(client, same_64) == [302, 302, 302, 429, 429]
    assert _next_task_codes(client, [{"REMOTE_ADDR": f"2001:db8:{next(_unique):x}:2::1"}]) == [302]


@pytest.mark.django_db
def test_a_direct_client_cannot_pass_for_https(behind_proxy, client, settings):
    settings.SECURE_SSL_REDIRECT = True
    url = reverse("login")
    direct = client.get(url, REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_PROTO="https")
    assert direct.status_code == 301 and direct["Location"].startswith("https://")
    assert client.get(url, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_PROTO="https").status_code == 200


@pytest.mark.django_db
def test_a_rate_limited_button_answers_the_browser_with_a_page_and_scripts_with_json(client, make_user, settings):
    """*Start next task* is a form's button: past the limit the browser gets a page saying how long
    to wait (it showed the JSON text); a script's fetch (no HTML in Accept) still reads JSON."""
    settings.RATE_LIMIT_WORK_PER_MINUTE = (2, 1000)
    published_batch()
    client.force_login(make_user("hasty-worker", "worker"))
    address = {"REMOTE_ADDR": f"203.0.113.{next(_unique)}"}
    html = {"HTTP_ACCEPT": "text/html,application/xhtml+xml,*/*;q=0.8"}
    assert _next_task_codes(client, [{**address, **html}] * 2) == [302, 302]
    page = client.post(reverse("work_next"), **address, **html)
    assert page.status_code == 429 and page["Content-Type"].startswith("text/html") and page["Retry-After"]
    text = page.content.decode()
    assert 'id="too-many"' in text and "Too many requests for a new task in a minute" in text
    script = client.post(reverse("work_next"), **address, HTTP_ACCEPT="*/*")
    assert script.status_code == 429 and script.json()["code"] == "rate_limited"
