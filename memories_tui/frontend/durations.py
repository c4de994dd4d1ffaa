"""Durations people type for grants (`--expires 30m`, `8h`, `7d`, `1h30m`), shared by the
front ends that start or register the MCP server."""

from __future__ import annotations

import re

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+)\s*([smhdw])")
MAX_DURATION = 366 * 86400


def parse_duration(text: str) -> float:
    """'30m', '8h', '7d', '1h30m' → seconds. Bare numbers and zero are refused (ambiguous, useless)."""
    compact = text.strip().lower().replace(" ", "")
    readable = bool(compact) and not _DURATION.sub("", compact)
    seconds = sum(int(n) * _UNITS[unit] for n, unit in _DURATION.findall(compact)) if readable else 0
    if readable and 0 < seconds <= MAX_DURATION:
        return float(seconds)
    from ..errors import UsageError  # only when refusing: `memories mcp` reads a duration before the rest loads
    from ..i18n import msg

    if not readable:
        raise UsageError(msg("Cannot read the duration {text!r}: use a number and a unit, e.g. 30m, 8h, 7d or "
                             "1h30m (units: s, m, h, d, w).", text=text))
    if seconds <= 0:
        raise UsageError(msg("The duration {text!r} is zero; give a positive one, e.g. 8h.", text=text))
    raise UsageError(msg("The duration {text!r} is over a year; grant less, or leave --expires out.", text=text))
