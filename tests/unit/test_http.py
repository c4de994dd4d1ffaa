"""URL policy, proxy selection, retries and strict JSON."""

from __future__ import annotations

import dataclasses
import threading
import time

import httpx
import pytest

from memories_tui.config import HttpSettings
from memories_tui.errors import CancelledError, ConfigError, ModelError, NetworkError, PolicyError
from memories_tui.models import http as nethttp
from memories_tui.models.http import (
    check_endpoint_url,
    check_redirect,
    is_loopback_url,
    make_client,
    send_with_retries,
)
from memories_tui.models.proxy import proxy_for
from memories_tui.models.strict_json import strict_json
from tests.helpers.loopback import unused_port
from tests.helpers.mirror import Mirror

# --------------------------------------------------------------------------- URL policy


@pytest.mark.parametrize("url,loopback", [
    ("https://api.example.com/v1/embeddings", False),
    ("https://example.com:8443/x", False),
    ("http://127.0.0.1:8080/v1", True),
    ("http://127.255.0.9/v1", True),
    ("http://localhost:11434/api", True),
    ("http://LOCALHOST/api", True),
    ("http://[::1]:9000/x", True),
])
def test_allowed_urls(url, loopback):
    assert check_endpoint_url(url, what="test URL") is None
    assert is_loopback_url(url) is loopback
    # the same URL is refused as soon as it carries a query string, credentials or a fragment
    scheme, rest = url.split("://", 1)
    for bad, fragment in [(url + "?key=1", "query"), (f"{scheme}://user:pw@{rest}", "credentials"),
                          (url + "#x", "fragment")]:
        with pytest.raises(PolicyError) as info:
            check_endpoint_url(bad, what="test URL")
        assert fragment in info.value.message and info.value.code == "policy_denied"
    if loopback:  # plain http is allowed only because the host is loopback
        with pytest.raises(PolicyError, match="not loopback"):
            check_endpoint_url(url.replace(url.split("/")[2], "api.example.com"), what="test URL")


@pytest.mark.parametrize("url,fragment", [
    ("http://api.example.com/v1", "not loopback"),
    ("http://10.0.0.1/v1", "not loopback"),
    ("http://0.0.0.0/v1", "not loopback"),
    ("http://127.1/v1", "not loopback"),             # OS would resolve it; we fail closed
    ("http://2130706433/v1", "not loopback"),
    ("http://0x7f.0.0.1/v1", "not loopback"),
    ("http://[::ffff:127.0.0.1]/v1", "not loopback"),  # IPv4-mapped: fail closed
    ("http://localhost./v1", "not loopback"),
    ("http://foo.localhost/v1", "not loopback"),
    ("http://localhost.example.com/v1", "not loopback"),
    ("https://user:pw@api.example.com/v1", "credentials"),
    ("https://key@api.example.com/v1", "credentials"),
    ("http://u:p@127.0.0.1/v1", "credentials"),
    ("https://api.example.com/v1?key=abc", "query"),
    ("https://api.example.com/v1?", "query"),
    ("https://api.example.com/v1#frag", "fragment"),
    ("ftp://api.example.com/v1", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("https:///nohost", "host"),
    ("", "empty"),
    ("https://api.example.com/a b", "spaces"),
])
def test_refused_urls(url, fragment):
    with pytest.raises(PolicyError) as info:
        check_endpoint_url(url, what="Embedding URL")
    assert fragment in info.value.message
    assert info.value.message.startswith("Embedding URL")


def test_https_to_127_1_is_just_a_host_name():
    check_endpoint_url("https://127.1/x", what="u")  # TLS decides; not treated as loopback
    assert not is_loopback_url("https://127.1/x")


def test_is_loopback_url():
    assert is_loopback_url("http://127.0.0.1:1/")
    assert is_loopback_url("https://localhost/")
    assert is_loopback_url("http://[::1]/")
    assert not is_loopback_url("http://[::ffff:127.0.0.1]/")
    assert not is_loopback_url("http://127.1/")
    assert not is_loopback_url("http://example.com/")
    assert not is_loopback_url("not a url")


def test_query_allowed_only_when_asked():
    check_endpoint_url("https://cdn.example.com/file?sig=1", what="hop", allow_query=True)


def test_redirect_rules():
    assert check_redirect("https://hf.example/a", "https://cdn.example/b?sig=x") == "https://cdn.example/b?sig=x"
    assert check_redirect("http://127.0.0.1:5/a", "/b") == "http://127.0.0.1:5/b"
    assert check_redirect("http://127.0.0.1:5/a", "https://cdn.example/b") == "https://cdn.example/b"
    for cur, loc in [
        ("https://hf.example/a", "http://cdn.example/b"),
        ("https://hf.example/a", "http://127.0.0.1/b"),      # downgrade to http, even loopback
        ("http://127.0.0.1:5/a", "http://127.0.0.1:6/b"),    # other loopback origin
        ("http://127.0.0.1:5/a", "http://example.com/b"),
        ("https://hf.example/a", "https://u:p@cdn.example/b"),
        ("https://hf.example/a", "ftp://cdn.example/b"),
    ]:
        with pytest.raises(PolicyError):
            check_redirect(cur, loc)


# --------------------------------------------------------------------------- proxies

REMOTE = "https://api.example.com/v1/embed"
ENV = {"HTTPS_PROXY": "http://envproxy:3128", "HTTP_PROXY": "http://plainproxy:3128"}


def test_explicit_proxy_wins_over_environment():
    s = HttpSettings(proxy_url="socks5h://corp:1080")
    assert proxy_for(REMOTE, s, ENV) == "socks5h://corp:1080"
    assert proxy_for(REMOTE, HttpSettings(proxy_url="socks5h://corp:1080", use_env_proxy=False), ENV) \
        == "socks5h://corp:1080"


def test_environment_only_when_enabled():
    assert proxy_for(REMOTE, HttpSettings(), ENV) == "http://envproxy:3128"
    assert proxy_for(REMOTE, HttpSettings(use_env_proxy=False), ENV) is None
    assert proxy_for(REMOTE, HttpSettings(), {}) is None


def test_environment_scheme_selection_and_case():
    assert proxy_for("http://127.0.0.1/x", HttpSettings(), ENV) is None
    assert proxy_for(REMOTE, HttpSettings(), {"https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1"}) \
        == "http://lower:1"
    assert proxy_for(REMOTE, HttpSettings(), {"ALL_PROXY": "socks5://all:1080"}) == "socks5://all:1080"
    assert proxy_for(REMOTE, HttpSettings(), {"all_proxy": "socks5h://all:1080"}) == "socks5h://all:1080"
    assert proxy_for(REMOTE, HttpSettings(), {"HTTPS_PROXY": "bare:3128"}) == "http://bare:3128"
    assert proxy_for(REMOTE, HttpSettings(), {"HTTPS_PROXY": ""}) is None


def test_bad_environment_proxy_is_a_config_error():
    with pytest.raises(ConfigError) as info:
        proxy_for(REMOTE, HttpSettings(), {"HTTPS_PROXY": "socks4://p:1"})
    assert "HTTPS_PROXY" in info.value.message


@pytest.mark.parametrize("no_proxy,direct", [
    ("api.example.com", True),
    ("example.com", True),
    (".example.com", True),
    ("*.example.com", True),
    ("*", True),
    ("other.com, example.com", True),
    ("api.example.com:443", True),
    ("api.example.com:8443", False),
    ("ample.com", False),
    ("other.com", False),
    ("", False),
])
def test_no_proxy(no_proxy, direct):
    env = dict(ENV, NO_PROXY=no_proxy)
    assert (proxy_for(REMOTE, HttpSettings(), env) is None) == direct
    env = dict(ENV, no_proxy=no_proxy)
    assert (proxy_for(REMOTE, HttpSettings(), env) is None) == direct


def test_no_proxy_ip_and_cidr():
    env = dict(ENV, NO_PROXY="10.0.0.0/8,192.168.1.5")
    assert proxy_for("https://10.1.2.3/x", HttpSettings(), env) is None
    assert proxy_for("https://192.168.1.5/x", HttpSettings(), env) is None
    assert proxy_for("https://192.168.1.6/x", HttpSettings(), env) == "http://envproxy:3128"


def test_no_proxy_does_not_affect_explicit_proxy():
    env = dict(ENV, NO_PROXY="*")
    assert proxy_for(REMOTE, HttpSettings(proxy_url="http://corp:8080"), env) == "http://corp:8080"


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/x",
                                 "https://localhost/x"])
def test_loopback_always_direct(url):
    assert proxy_for(url, HttpSettings(proxy_url="http://corp:8080"), ENV) is None
    assert proxy_for(url, HttpSettings(), ENV) is None


def test_make_client_settings(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://envproxy:3128")
    s = HttpSettings(connect_timeout_seconds=3, timeout_seconds=7)
    client = make_client(s, "http://127.0.0.1:1/x")
    try:
        assert client.trust_env is False
        assert client.follow_redirects is False
        assert client.timeout.connect == 3 and client.timeout.read == 7
        assert not client._mounts  # loopback: no proxy transport
    finally:
        client.close()
    for proxy in ("socks5h://corp:1080", "socks5://corp:1080", "http://corp:8080", "https://corp:8443"):
        client = make_client(HttpSettings(proxy_url=proxy), REMOTE)
        try:
            assert client._mounts  # a proxy transport is mounted
        finally:
            client.close()
    with pytest.raises(PolicyError):
        make_client(s, "http://example.com/x")


# --------------------------------------------------------------------------- retries

FAST = HttpSettings(use_env_proxy=False, retries=2, backoff_ms=1, connect_timeout_seconds=2, timeout_seconds=2)


@pytest.fixture
def server():
    with Mirror({"ok": b'{"fine": 1}'}) as m:
        yield m


def _send(server, settings=FAST, **kw):
    client = make_client(settings, server.url)
    try:
        return send_with_retries(client, lambda: client.build_request("POST", f"{server.url}/ok", json={"q": 1}),
                                 settings=settings, **kw)
    finally:
        client.close()


def test_500_then_ok(server):
    server.queue("ok", 500)
    r = _send(server)
    assert r.status_code == 200 and r.json() == {"fine": 1}
    assert len(server.requests_for("ok")) == 2


def test_each_retryable_status(server):
    for status in (429, 500, 502, 503, 504):
        server.queue("ok", status)
    r = _send(server, dataclasses.replace(FAST, retries=5))
    assert r.status_code == 200
    assert len(server.requests_for("ok")) == 6


def test_retries_exhausted_returns_last_response(server):
    for _ in range(3):
        server.queue("ok", 503)
    r = _send(server)
    assert r.status_code == 503
    assert len(server.requests_for("ok")) == 3
    assert "503" in nethttp.status_error(r, what="embed").message


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422, 501])
def test_other_statuses_not_retried(server, status):
    server.queue("ok", status, body=b"nope")
    r = _send(server)
    assert r.status_code == status and r.content == b"nope"
    assert len(server.requests_for("ok")) == 1


def test_redirect_not_followed(server):
    server.queue("ok", 302, {"Location": "/elsewhere"})
    r = _send(server)
    assert r.status_code == 302
    assert len(server.requests) == 1
    assert "redirect" in nethttp.status_error(r, what="embed").message


def _record_sleeps(monkeypatch) -> list[float]:
    """Replace the retry sleep by a recorder: tests assert what was waited, never how long it took."""
    slept: list[float] = []
    monkeypatch.setattr(nethttp, "_sleep", lambda seconds, cancel: slept.append(seconds))
    return slept


def test_429_retry_after_is_honoured(server, monkeypatch):
    slept = _record_sleeps(monkeypatch)
    server.queue("ok", 429, {"Retry-After": "7"})
    r = _send(server, dataclasses.replace(FAST, backoff_ms=100))
    assert r.status_code == 200
    assert slept == [7.0]  # the server's delay, not the 0.1 s backoff
    assert len(server.requests_for("ok")) == 2


def test_retry_after_capped_and_backoff_exponential(server, monkeypatch):
    slept = _record_sleeps(monkeypatch)
    server.queue("ok", 429, {"Retry-After": "3600"})
    server.queue("ok", 503)
    server.queue("ok", 503, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})  # dates ignored
    r = _send(server, dataclasses.replace(FAST, retries=3, backoff_ms=100))
    assert r.status_code == 200
    assert slept == [30.0, 0.2, 0.4]


def test_retry_after_beyond_deadline_returns_response(server, monkeypatch):
    slept = _record_sleeps(monkeypatch)
    server.queue("ok", 429, {"Retry-After": "20"})
    r = _send(server, deadline=time.monotonic() + 60)  # 20 s fit the budget: waited and retried
    assert r.status_code == 200 and slept == [20.0]
    slept.clear()
    server.queue("ok", 429, {"Retry-After": "20"})
    r = _send(server, deadline=time.monotonic() + 10)  # 20 s would pass the deadline: handed back
    assert r.status_code == 429
    assert slept == [] and len(server.requests_for("ok")) == 3


def test_connect_failure_retried_then_network_error():
    port = unused_port()  # nothing listens here
    url = f"http://127.0.0.1:{port}/x"
    calls = []
    client = make_client(FAST, url)

    def factory():
        calls.append(1)
        return client.build_request("GET", url)

    with pytest.raises(NetworkError) as info:
        send_with_retries(client, factory, settings=FAST)
    client.close()
    assert len(calls) == 3
    assert "could not connect" in info.value.message and "3 attempts" in info.value.message


def test_read_timeout_retried_and_deadline_enforced(server):
    server.hang.add("ok")
    s = dataclasses.replace(FAST, retries=5, timeout_seconds=0.2)
    with pytest.raises(NetworkError) as info:
        _send(server, s, deadline=time.monotonic() + 0.5)
    assert "timed out" in info.value.message and info.value.code == "network_timeout"
    # Every attempt waits min(0.2 s, time left): a 0.5 s deadline fits at most 4 attempts
    # (3 full ones and a last sliver), fewer on a slow machine, never the 6 the retries allow.
    assert 1 <= len(server.requests_for("ok")) <= 4


def test_read_timeout_retried_until_retries_run_out(server):
    server.hang.add("ok")
    with pytest.raises(NetworkError) as info:
        _send(server, dataclasses.replace(FAST, retries=2, timeout_seconds=0.05))
    assert info.value.code == "network_timeout" and "after 3 attempts" in info.value.message
    assert len(server.requests_for("ok")) == 3


def test_cancel_interrupts_backoff(server, monkeypatch):
    """Cancel is set only once the client is inside a 10-minute backoff; the call must end
    with CancelledError at once (the join below is a hang guard, not a timing assertion)."""
    server.queue("ok", 503)
    cancel = threading.Event()
    real_sleep = nethttp._sleep
    asked: list[float] = []
    woken: list[bool] = []

    def sleep_then_cancel(seconds, event):
        asked.append(seconds)
        threading.Thread(target=cancel.set).start()  # another thread cancels while we wait
        try:
            return real_sleep(seconds, event)
        except CancelledError:
            woken.append(True)  # the sleep itself noticed, not a check after it ran out
            raise

    monkeypatch.setattr(nethttp, "_sleep", sleep_then_cancel)
    outcome: list[BaseException] = []

    def call():
        try:
            _send(server, dataclasses.replace(FAST, backoff_ms=600_000), cancel=cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            outcome.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the backoff sleep ignored cancel"
    assert asked == [30.0]  # backoff is capped at 30 s; it was waiting when cancel came
    assert woken == [True]
    assert len(outcome) == 1 and isinstance(outcome[0], CancelledError)
    assert len(server.requests_for("ok")) == 1


def test_cancel_before_first_attempt(server):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        _send(server, cancel=cancel)
    assert not server.requests


def test_check_callback_runs_between_attempts(server):
    server.queue("ok", 503)
    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise PolicyError("vault locked meanwhile")

    with pytest.raises(PolicyError):
        _send(server, check=check)
    assert len(server.requests_for("ok")) == 1


def test_stream_mode_returns_open_response(server):
    client = make_client(FAST, server.url)
    try:
        r = send_with_retries(client, lambda: client.build_request("GET", f"{server.url}/ok"), settings=FAST,
                              stream=True)
        assert r.read() == b'{"fine": 1}'
        r.close()
    finally:
        client.close()


def test_unit_helpers():
    assert nethttp.backoff_seconds(HttpSettings(backoff_ms=500), 1) == 0.5
    assert nethttp.backoff_seconds(HttpSettings(backoff_ms=500), 3) == 2.0
    assert nethttp.backoff_seconds(HttpSettings(backoff_ms=60_000), 5) == 30.0
    r = httpx.Response(429, headers={"Retry-After": "7"})
    assert nethttp.retry_after_seconds(r) == 7
    assert nethttp.retry_after_seconds(httpx.Response(429, headers={"Retry-After": "-1"})) is None
    assert nethttp.retry_after_seconds(httpx.Response(429)) is None


# --------------------------------------------------------------------------- strict JSON


def test_strict_json_accepts_normal_json():
    assert strict_json('{"a": [1, 2.5, -3e2, null, true, "x"]}') == {"a": [1, 2.5, -300.0, None, True, "x"]}
    assert strict_json(b'{"a": 1}') == {"a": 1}


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}',
    '{"x": {"b": 1, "b": 1}}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '[-Infinity]',
    '[1e999]',
    '{"a": 1',
    '',
    '{"a": 1} trailing',
    b'\xff\xfe',
    "[" * 100_000 + "]" * 100_000,
    "1" * 10_000,
])
def test_strict_json_rejects(text):
    with pytest.raises(ModelError):
        strict_json(text)


def test_each_attempts_timeouts_are_capped_by_the_time_left_of_the_whole_request():
    """A connect that may take 5 s must not outlive a request with 1 s left (nor may the read)."""
    settings = HttpSettings(connect_timeout_seconds=5, timeout_seconds=30, request_timeout_seconds=300)
    capped = nethttp.attempt_timeout(settings, time.monotonic() + 1.0)
    assert 0 < capped.connect <= 1.0 and 0 < capped.read <= 1.0 and 0 < capped.pool <= 1.0
    roomy = nethttp.attempt_timeout(settings, time.monotonic() + 3600)
    assert (roomy.connect, roomy.read) == (5, 30)
    spent = nethttp.attempt_timeout(settings, time.monotonic() - 1)  # past the deadline: the smallest wait
    assert spent.connect == spent.read == 0.001
