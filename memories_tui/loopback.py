"""Is a host literal loopback? Standard library only, so config validation and the HTTP layer
share one answer without config importing httpx (see models/http.py for the decisions)."""

from __future__ import annotations

import ipaddress


def is_loopback_host(host: str) -> bool:
    """True only for `localhost`, a dotted-quad 127.0.0.0/8 literal, or ``::1`` (fail closed)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    if "%" in host:  # IPv6 zone ids are never loopback
        return False
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return False  # ::ffff:127.0.0.1 — decided: not loopback (fail closed)
    return addr.is_loopback
