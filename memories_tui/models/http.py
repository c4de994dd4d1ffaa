"""The one httpx client factory and the network rules every outbound call follows.

The URL policy (HTTPS, or plain HTTP to loopback only), proxies and TLS, and timeouts with
retries live here, so no call can skip them.

Decisions worth knowing:

* Loopback is decided from the URL text alone, failing closed: only the name ``localhost``
  (any case, no trailing dot), IPv4 literals in 127.0.0.0/8 written as four decimal octets,
  and ``::1``. ``127.1``, ``2130706433``, ``0x7f.0.0.1`` (forms the OS resolver would
  turn into 127.0.0.1) are *not* IP literals to :mod:`ipaddress`, so they are treated as
  host names and are not loopback: plain HTTP to them is refused. ``::ffff:127.0.0.1``
  (IPv4-mapped IPv6) is not loopback either, on every Python version.
* ``trust_env=False`` always; proxies are chosen here by :func:`proxy_for`. Loopback always
  goes direct, an explicit ``proxy_url`` beats the environment, the environment is read
  only when ``use_env_proxy`` is true (``proxy.py``). Strict JSON parsing of model replies
  is in ``strict_json.py``.
* Redirects are never followed by httpx. Model API callers treat a 3xx as an error; the
  model installer follows them itself (see ``install.py``) with :func:`check_redirect`.
* Every request has a deadline: an absolute :func:`time.monotonic` value the caller gives,
  else ``[rag.http] request_timeout_seconds`` from its start, retries and waits included.
  It is checked before every attempt and between body chunks, each attempt's timeouts are
  capped at the time left, and a watcher (``inflight.py``) shuts the sockets down when the
  deadline passes or the cancel event is set, so even a server that trickles its headers
  one byte at a time cannot hold a request past it.
* Bodies are read under a byte cap that binds while they arrive, raw and decompressed
  (``reply_body.py``); only gzip is asked for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx

from ..config import HttpSettings
from ..errors import CancelledError, ErrorCode, NetworkError, PolicyError
from ..i18n import Message, msg, msg_n
from ..loopback import is_loopback_host
from .inflight import InFlight
from .proxy import proxy_for
from .reply_body import ACCEPT_ENCODING, MAX_REPLY_BYTES, read_capped

USER_AGENT = "memories-tui/0.1"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_RETRY_AFTER_SECONDS = 30.0
MAX_BACKOFF_SECONDS = 30.0
MAX_REDIRECTS = 5

# Connect and read failures: the request may be sent again. Everything else (TLS
# verification failures show up as ConnectError too, and are retried like any connect
# failure; they fail the same way each time, which only costs the retry budget).
RETRYABLE_ERRORS: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadError,
    httpx.ReadTimeout,
    httpx.RemoteProtocolError,
)


# --------------------------------------------------------------------------- URL policy


def _parse(url: str, what: str) -> httpx.URL:
    if not isinstance(url, str) or not url:
        raise PolicyError(msg("{what} is empty.", what=what))
    if any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise PolicyError(msg("{what} must not contain spaces or control characters.", what=what))
    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise PolicyError(msg("{what} is not a valid URL ({reason}).", what=what, reason=exc)) from None


def is_loopback_url(url: str) -> bool:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host) and is_loopback_host(parsed.host)


def check_endpoint_url(url: str, *, what: str, allow_query: bool = False) -> None:
    """HTTPS, or plain HTTP to loopback; no credentials, query or fragment.

    `allow_query` is only for download redirect hops (CDNs sign their URLs with a query
    string); configured URLs never get it.
    """
    parsed = _parse(url, what)
    if parsed.scheme not in ("http", "https"):
        raise PolicyError(msg("{what} must be an https:// URL (http:// only for loopback); got scheme "
                              "{scheme!r}.", what=what, scheme=parsed.scheme))
    if not parsed.host:
        raise PolicyError(msg("{what} has no host.", what=what))
    if parsed.userinfo or "@" in url.split("//", 1)[-1].split("/", 1)[0]:
        raise PolicyError(msg("{what} must not contain credentials; keys go in the environment variable named "
                              "by api_key_env.", what=what))
    if "#" in url:
        raise PolicyError(msg("{what} must not contain a fragment (#...).", what=what))
    if not allow_query and "?" in url:
        raise PolicyError(msg("{what} must not contain a query string (?...).", what=what))
    if parsed.scheme == "http" and not is_loopback_host(parsed.host):
        raise PolicyError(
            msg("{what} uses plain http:// to {host}, which is not loopback; remote services must use "
                "https:// (plain http is allowed only for 127.0.0.0/8, ::1 and localhost).",
                what=what, host=parsed.host)
        )


def check_redirect(current: str, location: str, *, what: str = "download") -> str:
    """Resolve and vet one redirect hop; return the absolute target URL.

    Rules: the target must itself pass :func:`check_endpoint_url` (query allowed); a
    target on plain http is allowed only if the current hop is plain http on loopback and
    the target has the same scheme, host and port (a loopback mirror redirecting within
    itself). Anything else — https→http, http to another loopback port — is refused.
    """
    try:
        target = httpx.URL(current).join(location)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise PolicyError(msg("{what}: refused a redirect to an invalid location {location!r} ({reason}).",
                              what=what, location=location, reason=exc)) from None
    target_str = str(target)
    try:
        check_endpoint_url(target_str, what=f"{what} redirect target", allow_query=True)
    except PolicyError as exc:
        raise PolicyError(msg("{what}: refused an unsafe redirect to {target_str}: {reason}",
                              what=what, target_str=target_str, reason=exc)) from None
    if target.scheme == "http":
        cur = httpx.URL(current)
        same_origin = (cur.scheme, cur.host, cur.port) == (target.scheme, target.host, target.port)
        if not (cur.scheme == "http" and same_origin):
            raise PolicyError(
                msg("{what}: refused a redirect to plain http ({target_str}); downloads only follow redirects "
                    "to https.", what=what, target_str=target_str)
            )
    return target_str


# --------------------------------------------------------------------------- clients


def make_client(settings: HttpSettings, url: str, *, download: bool = False) -> httpx.Client:
    """A client for requests to `url`'s origin: no env trust, TLS verified, no auto-redirects.

    The URL is policy-checked here too (download hops may carry a query string).
    """
    check_endpoint_url(url, what="download URL" if download else "service URL", allow_query=download)
    read = settings.timeout_seconds
    timeout = httpx.Timeout(read, connect=settings.connect_timeout_seconds, pool=settings.connect_timeout_seconds)
    return httpx.Client(
        trust_env=False,
        verify=True,
        proxy=proxy_for(url, settings),
        timeout=timeout,
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
    )


# --------------------------------------------------------------------------- retries


def _sleep(seconds: float, cancel: threading.Event | None) -> None:
    """Sleep, waking early (and raising) if `cancel` is set. Tests monkeypatch this."""
    if seconds <= 0:
        return
    if cancel is None:
        time.sleep(seconds)
    elif cancel.wait(seconds):
        raise CancelledError(msg("Cancelled."))


def retry_after_seconds(response: httpx.Response) -> float | None:
    """`Retry-After` in delta-seconds form, capped at 30 s; dates and junk are ignored."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit():
        return None
    return min(float(int(value)), MAX_RETRY_AFTER_SECONDS)


def backoff_seconds(settings: HttpSettings, attempt: int) -> float:
    """Delay before retry number `attempt` (1-based): backoff_ms · 2^(attempt-1), capped."""
    return min(settings.backoff_ms / 1000.0 * (2 ** (attempt - 1)), MAX_BACKOFF_SECONDS)


def attempt_timeout(settings: HttpSettings, deadline: float | None) -> httpx.Timeout:
    """Per-attempt timeouts, each capped at the time left before `deadline`."""
    read = settings.timeout_seconds
    connect = settings.connect_timeout_seconds
    if deadline is not None:
        left = max(deadline - time.monotonic(), 0.001)
        read, connect = min(read, left), min(connect, left)
    return httpx.Timeout(read, connect=connect, pool=connect)


def _deadline_error(what: str) -> NetworkError:
    return NetworkError(msg("{what} timed out: the whole request (retries included) ran out of its time "
                            "budget ([rag.http] request_timeout_seconds).", what=what), code=ErrorCode.NETWORK_TIMEOUT)


def _check_state(cancel: threading.Event | None, check: Callable[[], None] | None,
                 deadline: float | None, what: str) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError(msg("Cancelled."))
    if check is not None:
        check()
    if deadline is not None and time.monotonic() >= deadline:
        raise _deadline_error(what)


def describe_transport_error(exc: Exception) -> Message:
    """What went wrong, as a sentence shown in the reader's language (the system's own error
    text inside it stays as the system wrote it)."""
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)):
            return msg("connect timed out")
        return msg("read timed out")
    if isinstance(exc, httpx.ConnectError):
        return msg("could not connect ({error})", error=str(exc))
    if isinstance(exc, httpx.RemoteProtocolError):
        return msg("the connection broke ({error})", error=str(exc))
    if isinstance(exc, httpx.ProxyError):
        return msg("proxy error ({error})", error=str(exc))
    return msg("{kind}: {error}", kind=type(exc).__name__, error=str(exc))


def _failure_code(exc: Exception) -> str | None:
    """`network_unreachable` when no connection could be made at all, `network_timeout` for a timeout."""
    if isinstance(exc, httpx.ConnectError):
        return ErrorCode.NETWORK_UNREACHABLE
    if isinstance(exc, httpx.TimeoutException):
        return ErrorCode.NETWORK_TIMEOUT
    return None


def send_with_retries(
    client: httpx.Client,
    request_factory: Callable[[], httpx.Request],
    *,
    settings: HttpSettings,
    cancel: threading.Event | None = None,
    deadline: float | None = None,
    check: Callable[[], None] | None = None,
    stop: Callable[[], bool] | None = None,
    stream: bool = False,
    what: str = "request",
    max_body_bytes: int = MAX_REPLY_BYTES,
) -> httpx.Response:
    """Send a request with retries (backoff, Retry-After) and return the final response.

    * Retried: connect/read failures and statuses 429, 500, 502, 503, 504 — at most
      ``settings.retries`` extra attempts, sleeping ``backoff_ms·2^n`` or the server's
      ``Retry-After`` seconds (capped at 30 s). Nothing else is retried.
    * Before every attempt: `cancel` (→ CancelledError), `check()` (an authorization or lock
      callback; whatever it raises propagates) and `deadline` (→ NetworkError
      ``network_timeout``; default ``settings.request_timeout_seconds`` from now). Cancel and
      the deadline are also checked between body chunks and cut a read that is waiting
      (``inflight.py``), as does `stop()` turning true (a lock of the vault; `check()` then
      says why).
    * Statuses are not turned into errors here: when retries are exhausted (or waiting
      would pass the deadline) the last response is returned; use :func:`status_error`.
      Transport failures that exhaust the retries raise NetworkError.
    * ``stream=False`` reads the body, refused past `max_body_bytes` raw or decompressed
      (ModelError) while it arrives; ``stream=True`` returns an open response the caller
      must close (the watch then ends: the caller checks its own body reads).
    `request_factory` is called for every attempt, so it may change headers (e.g. Range).
    """
    if deadline is None:
        deadline = time.monotonic() + settings.request_timeout_seconds
    with InFlight(cancel, deadline, stop) as watch:

        def between() -> None:  # between body chunks: the lock check waits for the next attempt or the end
            _check_state(cancel, None, deadline, what)
            if watch.tripped:
                if check is not None:
                    check()  # cut at a lock: the check's own sentence says so
                raise CancelledError(msg("Cancelled."))

        attempt = 0
        while True:
            _check_state(cancel, check, deadline, what)
            request = request_factory()
            request.extensions["timeout"] = attempt_timeout(settings, deadline).as_dict()
            request.extensions["trace"] = watch.trace
            response, delay = _attempt(client, request, attempt, settings, deadline, what=what, stream=stream,
                                       max_body_bytes=max_body_bytes, between=between)
            if response is not None:
                return response
            attempt += 1
            _sleep(min(delay, max(deadline - time.monotonic(), 0.0)), cancel)


def _attempt(client: httpx.Client, request: httpx.Request, attempt: int, settings: HttpSettings, deadline: float, *,
             what: str, stream: bool, max_body_bytes: int,
             between: Callable[[], None]) -> tuple[httpx.Response | None, float]:
    """One send: (the response to hand back, 0) or (None, how long to wait before the next try).
    A response not handed back is closed; a transport failure that ends the tries raises."""
    response: httpx.Response | None = None
    try:
        response = client.send(request, stream=True)
        delay = _retry_delay(response, attempt, settings, deadline)
        if delay is None:
            if not stream:
                body = read_capped(response, limit=max_body_bytes, what=what, between=between)
                # Same as Response.read() does after iterating; lets callers use .content/.json().
                response._content = body
            return response, 0.0
        response.close()
        return None, delay
    except httpx.TransportError as exc:
        if response is not None:
            response.close()
        between()  # cut by cancel or the deadline: say that, not "the connection broke"
        return None, _delay_after_failure(exc, attempt, settings, what)
    except BaseException:
        if response is not None:
            response.close()
        raise


def _retry_delay(response: httpx.Response, attempt: int, settings: HttpSettings, deadline: float) -> float | None:
    """How long to wait before trying again after this response; None: hand it back as it is."""
    if response.status_code not in RETRY_STATUSES or attempt >= settings.retries:
        return None
    ra = retry_after_seconds(response)
    delay = ra if ra is not None else backoff_seconds(settings, attempt + 1)
    return None if time.monotonic() + delay >= deadline else delay  # cannot wait that long


def _delay_after_failure(exc: httpx.TransportError, attempt: int, settings: HttpSettings, what: str) -> float:
    """The backoff before the next attempt after a transport failure, or the NetworkError that ends the tries."""
    if not isinstance(exc, RETRYABLE_ERRORS):
        raise NetworkError(msg("{what} failed: {problem}.",
                               what=what, problem=describe_transport_error(exc))) from None
    if attempt >= settings.retries:
        problem = describe_transport_error(exc)
        failed = msg_n("{what} failed after {n} attempt: {problem}.",
                       "{what} failed after {n} attempts: {problem}.", attempt + 1,
                       what=what, n=attempt + 1, problem=problem) if attempt else \
            msg("{what} failed: {problem}.", what=what, problem=problem)
        raise NetworkError(failed, code=_failure_code(exc)) from None
    return backoff_seconds(settings, attempt + 1)


def status_error(response: httpx.Response, *, what: str) -> NetworkError:
    """A clear NetworkError for an unexpected HTTP status (the body is not echoed)."""
    code = response.status_code
    if code in REDIRECT_STATUSES:
        return NetworkError(msg("{what}: the server answered with a redirect (HTTP {code}); redirects are not "
                                "followed.", what=what, code=code))
    if code in (401, 403):
        return NetworkError(msg("{what}: not authorized (HTTP {code}); check the API key environment variable.",
                                what=what, code=code),
                            code=ErrorCode.NETWORK_UNAUTHORIZED)
    if code == 429:
        return NetworkError(msg("{what}: rate limited (HTTP 429) and retries ran out.", what=what))
    if code >= 500:
        return NetworkError(msg("{what}: the server failed (HTTP {code}) and retries ran out.",
                                what=what, code=code))
    return NetworkError(msg("{what}: unexpected HTTP {code}.", what=what, code=code))
