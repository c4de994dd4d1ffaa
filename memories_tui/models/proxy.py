"""Which proxy, if any, an outbound request uses.

Loopback always goes direct; an explicit ``[rag.http] proxy_url`` beats the environment;
the environment (``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, either case) is read only when
``use_env_proxy`` is true. httpx itself never reads it (``trust_env=False`` in http.py).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping

import httpx

from ..config import PROXY_SCHEMES, HttpSettings
from ..errors import ConfigError
from ..i18n import msg
from ..loopback import is_loopback_host


def _no_proxy_matches(host: str, port: int, no_proxy: str) -> bool:
    host = host.strip("[]").lower()
    try:
        host_ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None = ipaddress.ip_address(host)
    except ValueError:
        host_ip = None
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "://" in entry:
            entry = entry.split("://", 1)[1]
        entry = entry.rstrip("/")
        entry_port: int | None = None
        if entry.startswith("["):  # [v6]:port
            inner, _, rest = entry[1:].partition("]")
            entry = inner
            if rest.startswith(":") and rest[1:].isdigit():
                entry_port = int(rest[1:])
        elif entry.count(":") == 1:
            name, _, p = entry.partition(":")
            if p.isdigit():
                entry, entry_port = name, int(p)
        if entry_port is not None and entry_port != port:
            continue
        if host_ip is not None:
            try:
                if host_ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                pass
            continue
        if entry.startswith("*."):
            entry = entry[1:]
        domain = entry.lstrip(".")
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


def _env(environ: Mapping[str, str], name: str) -> tuple[str, str] | None:
    for var in (name.lower(), name.upper()):
        value = environ.get(var)
        if value and value.strip():
            return var, value.strip()
    return None


def proxy_for(url: str, settings: HttpSettings, environ: Mapping[str, str] | None = None) -> str | None:
    """The proxy URL to use for `url`, or None for a direct connection."""
    if environ is None:
        environ = os.environ
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        parsed = None
    if parsed is not None and parsed.scheme in ("http", "https") and parsed.host and is_loopback_host(parsed.host):
        return None
    if settings.proxy_url:
        return settings.proxy_url
    if not settings.use_env_proxy:
        return None
    parsed = httpx.URL(url)  # raises for a malformed URL, as callers expect
    no_proxy = _env(environ, "no_proxy")
    if no_proxy and _no_proxy_matches(parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80),
                                      no_proxy[1]):
        return None
    found = _env(environ, f"{parsed.scheme}_proxy") or _env(environ, "all_proxy")
    if found is None:
        return None
    var, value = found
    if "://" not in value:
        value = "http://" + value
    try:
        proxy = httpx.URL(value)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise ConfigError(msg("Environment variable {var} is not a valid proxy URL.", var=var)) from None
    if proxy.scheme not in PROXY_SCHEMES or not proxy.host:
        raise ConfigError(
            msg("Environment variable {var} must be an {names} proxy URL with a host; got scheme {scheme!r}. "
                "Fix it, or set [rag.http] use_env_proxy = false.",
                var=var, names='/'.join(PROXY_SCHEMES), scheme=proxy.scheme)
        )
    return value
