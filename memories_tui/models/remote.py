"""One POST to a customer-configured model service, under every network rule.

Everything remote (embeddings in ``remote_embed``, generation and rerank in
``remote_generate``) goes through :class:`ServiceClient.post_json`, which:

* refuses a device-only vault's call to a non-loopback URL before anything is built or sent,
  and re-checks that and the caller's ``check`` (lock, authorization) before
  every attempt;
* takes the API key only from the environment variable named by ``api_key_env`` and sends
  it only in the header its protocol names (``x-goog-api-key`` for Gemini, ``Authorization:
  Bearer`` for compatible servers); a key is never part of a message, a URL or a body;
* uses the one client factory of :mod:`models.http` (URL policy, proxies, no redirects,
  retries with Retry-After, a deadline for the whole request, a reply cap that binds while
  the bytes arrive) and parses the answer with :func:`strict_json`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import httpx

from ..config import HttpSettings, RemoteService
from ..egress import EgressHook, Finish, Outbound, SentChunk
from ..errors import ConfigError, ErrorCode, MemoriesError, ModelError, PolicyError
from ..i18n import msg
from .http import is_loopback_url, make_client, send_with_retries, status_error
from .reply_body import MAX_REPLY_BYTES
from .strict_json import strict_json

MAX_RESPONSE_BYTES = MAX_REPLY_BYTES  # refused while it arrives, raw or decompressed


@dataclass(frozen=True)
class CallContext:
    """Per-call controls: cancellation, an authorization/lock check, the vault's policy, and
    the vault's egress log with what this request carries (`sends`, under `purpose`)."""

    cancel: threading.Event | None = None
    check: Callable[[], None] | None = None
    stop: Callable[[], bool] | None = None  # polled while a request waits: true cuts it (then `check` says why)
    device_only: bool = False
    deadline: float | None = None
    egress: EgressHook | None = None
    purpose: str | None = None  # default: the service's role
    sends: tuple[SentChunk, ...] = ()


def netloc_of(url: str) -> str:
    """host[:port] of a URL, for the egress log."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        return "?"
    host = parsed.host or "?"
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{parsed.port}" if parsed.port is not None else host


def host_of(url: str) -> str:
    try:
        return httpx.URL(url).host or "?"
    except (httpx.InvalidURL, ValueError, TypeError):
        return "?"


def refuse_if_device_only(url: str, device_only: bool, role: str) -> None:
    """A device-only vault never sends data to a non-loopback endpoint."""
    if device_only and not is_loopback_url(url):
        raise PolicyError(
            msg("This vault is device-only: the {role} service at {host} is not a loopback address, so "
                "nothing was sent. Use local inference or a service on 127.0.0.1/::1/localhost.",
                role=role, host=host_of(url)),
            code=ErrorCode.DEVICE_ONLY)


class ServiceClient:
    """Posts JSON to one configured service; `role` names it in messages ("embedding", …)."""

    def __init__(self, service: RemoteService, http: HttpSettings, role: str,
                 environ: Mapping[str, str] | None = None) -> None:
        self.service = service
        self.http = http
        self.role = role
        self._environ = environ if environ is not None else os.environ
        self.what = f"The {role} service ({host_of(service.url)})"

    @property
    def table(self) -> str:
        return f"rag.{self.role}"

    def api_key(self) -> str | None:
        """The key from the named environment variable (never echoed); optional on loopback."""
        name = self.service.api_key_env
        if name is None:
            if is_loopback_url(self.service.url):
                return None
            raise ConfigError(msg("{table}.api_key_env is required for a non-loopback service: name the "
                                  "environment variable that holds the API key.", table=self.table))
        value = (self._environ.get(name) or "").strip()
        if not value:
            raise ConfigError(msg("The environment variable {name} (named by {table}.api_key_env) is not set.",
                                  name=name, table=self.table),
                              code=ErrorCode.API_KEY_MISSING)
        if any(ord(c) < 0x21 or ord(c) > 0x7E for c in value):
            raise ConfigError(msg("The environment variable {name} does not hold a usable API key (it "
                                  "contains spaces or non-ASCII characters; value not shown).", name=name),
                              code=ErrorCode.API_KEY_INVALID)
        return value

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self.api_key()
        if key is not None:
            if self.service.protocol == "gemini":
                headers["x-goog-api-key"] = key
            else:
                headers["Authorization"] = f"Bearer {key}"
        return headers

    def post_json(self, payload: Any, ctx: CallContext, url: str | None = None) -> Any:
        """POST `payload` to `url` (default: the configured one) and return the parsed JSON.

        Every request that goes out is first written to the vault's egress log (`ctx.egress`)
        and its outcome recorded after: the log entry is made just before the first attempt
        (a request refused earlier, e.g. by the device-only rule, sent nothing and is not
        logged), and a log that cannot be written stops the request."""
        url = url or self.service.url
        refuse_if_device_only(url, ctx.device_only, self.role)
        headers = self.headers()
        body = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
        attempts = 0
        finish: Finish | None = None

        def check() -> None:
            refuse_if_device_only(url, ctx.device_only, self.role)
            if ctx.check is not None:
                ctx.check()

        def request() -> httpx.Request:
            nonlocal attempts, finish
            if finish is None and ctx.egress is not None:
                finish = ctx.egress.opened(Outbound(ctx.purpose or self.role, netloc_of(url), is_loopback_url(url),
                                                    ctx.sends, len(body)))
            attempts += 1
            return client.build_request("POST", url, headers=headers, content=body)

        received = 0
        try:
            with make_client(self.http, url) as client:
                response = send_with_retries(client, request, settings=self.http, cancel=ctx.cancel,
                                             deadline=ctx.deadline, check=check, stop=ctx.stop, what=self.what,
                                             max_body_bytes=MAX_RESPONSE_BYTES)
            received = len(response.content)
            if response.status_code != 200:
                raise status_error(response, what=self.what)
            try:
                parsed = strict_json(response.content)
            except ModelError as exc:
                raise ModelError(msg("{what}: {reason}", what=self.what, reason=exc),
                                 code=ErrorCode.MODEL_BAD_RESPONSE) from None
        except BaseException as exc:
            if finish is not None:
                finish(exc.code if isinstance(exc, MemoriesError) else "interrupted", received, attempts)
            raise
        if finish is not None:
            finish("ok", received, attempts)
        return parsed


def bad_response(client: ServiceClient, detail: str) -> ModelError:
    return ModelError(msg("{what} returned an unusable response: {detail}.", what=client.what, detail=detail), code=ErrorCode.MODEL_BAD_RESPONSE)


def field(obj: Any, key: str, kind: type | tuple[type, ...], client: ServiceClient, where: str) -> Any:
    """obj[key] with a type check; a missing key or a wrong type is a clear ModelError."""
    if not isinstance(obj, dict) or key not in obj:
        raise bad_response(client, f"{where} has no {key!r}")
    value = obj[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise bad_response(client, f"{where}.{key} has the wrong type")
    if not isinstance(value, kind):
        raise bad_response(client, f"{where}.{key} has the wrong type")
    return value


def with_context(ctx: CallContext | None, **changes: Any) -> CallContext:
    return replace(ctx or CallContext(), **changes)
