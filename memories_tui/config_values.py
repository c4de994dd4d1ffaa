"""Checks for single config values, and what an error may show of a value: never one shaped
like an API key (whatever field it sits in)."""

from __future__ import annotations

import math
import re
from typing import Any

from .errors import ConfigError
from .i18n import N_, Message, msg, msg_n, term

# Values that look like API keys: known prefixes, or a long opaque token mixing cases and digits.
_KEY_SHAPES = (
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{12,}"),
    re.compile(r"\b(?:ghp|gho|ghs|ghu|xox[abp]|hf|gsk|glpat|github_pat)_[A-Za-z0-9_\-]{12,}"),
    re.compile(r"\b(?:xai|pplx|nvapi|csk|fw)-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b[A-Za-z]{2,10}_[A-Za-z0-9]{24,}"),  # prefix_ + a long token (Groq gsk_, many others)
    re.compile(r"(?i)\bbearer\s+\S+"),
)
_OPAQUE = re.compile(r"[A-Za-z0-9_+=]{32,}")  # no "-" or "/": model names are hyphenated paths


def looks_like_key(value: str) -> bool:
    """True when a config value has the shape of a secret (we refuse to keep keys in TOML)."""
    if any(p.search(value) for p in _KEY_SHAPES):
        return True
    for token in _OPAQUE.findall(value):
        if any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token):
            return True
    return False


def table_value(value: Any, name: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(msg("[{name}] must be a table.", name=name))
    unknown = sorted(set(value) - allowed)
    if unknown:
        where: str | Message = f"[{name}]" if name else term(N_("the top level"))
        raise ConfigError(msg_n("Unknown config key in {where}: {names}.", "Unknown config keys in {where}: {names}.",
                                len(unknown), where=where, names=', '.join(str(shown(k, quote=False)) for k in unknown)))
    return value


def shown(value: Any, *, quote: bool = True) -> str | Message:
    """A config value as an error message may show it: never one shaped like a key (whatever
    field it sits in), never more than 60 characters, only scalars (a table or list by type)."""
    if isinstance(value, str):
        if looks_like_key(value):
            return msg("a value shaped like an API key (not shown)")
        text = value if len(value) <= 60 else value[:57] + "..."
        return repr(text) if quote else text
    if isinstance(value, (bool, int, float)):
        return repr(value)
    return msg("a {kind} (not shown)", kind=type(value).__name__)


def text_value(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(msg("{name} must be a non-empty string.", name=name))
    return value


def int_value(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigError(msg("{name} must be an integer from {lo} to {hi}; got {shown}.",
                              name=name, lo=lo, hi=hi, shown=shown(value)))
    return value


def number_value(value: Any, name: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not lo <= value <= hi:
        raise ConfigError(msg("{name} must be a number from {lo} to {hi}; got {shown}.",
                              name=name, lo=lo, hi=hi, shown=shown(value)))
    return float(value)
