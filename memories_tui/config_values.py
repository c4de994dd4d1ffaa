"""Checks for single config values, and what an error may show of a value: never one shaped
like an API key (whatever field it sits in)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar, cast

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
T = TypeVar("T")
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


def bool_value(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(msg("{name} must be true or false.", name=name))
    return value


def choice_value(value: Any, name: str, choices: tuple[str, ...]) -> str:
    value = text_value(value, name)
    if value not in choices:
        raise ConfigError(msg("{name} must be one of {names}; got {shown}.",
                              name=name, names=', '.join(choices), shown=shown(value)))
    return value


# Declaring a setting: each key is one dataclass field that carries its default and its bounds,
# so the parser, the defaults and the test against config.example.toml read one declaration.

@dataclass(frozen=True)
class Setting:
    """How one key is checked: numbers within [lo, hi], text among `choices`; `custom` keys
    (paths, URLs, free tables) are checked by the code that parses their table."""

    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    custom: bool = False
    section: bool = False  # a nested table ([rag.http]), declared by its own dataclass


def setting(default: Any = MISSING, *, lo: float | None = None, hi: float | None = None,
            choices: tuple[str, ...] = (), custom: bool = False, factory: Callable[[], Any] | None = None) -> Any:
    """A config key with its default: `field()` plus how the key is checked."""
    meta = {"setting": Setting(lo, hi, choices, custom)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def section(factory: Callable[[], Any] | None = None, *, required: bool = False) -> Any:
    """A nested table declared by its own dataclass; without `factory` an absent one is None."""
    meta = {"setting": Setting(section=True)}
    if required:
        return field(metadata=meta)
    return field(default_factory=factory, metadata=meta) if factory else field(default=None, metadata=meta)


def declared(cls: type) -> dict[str, Setting]:
    """The TOML keys a settings dataclass declares, in order, with how each is checked."""
    return {f.name: f.metadata["setting"] for f in fields(cls) if "setting" in f.metadata}


def declared_default(cls: type, key: str) -> Any:
    """The default of one key (MISSING for a required key)."""
    f = next(f for f in fields(cls) if f.name == key)
    return f.default_factory() if f.default_factory is not MISSING else f.default


def parse_table(cls: type[T], value: Any, name: str, *, only: set[str] | None = None, **given: Any) -> T:
    """Check table `value` against the keys `cls` declares (or the subset `only`) and build
    `cls`; `only` narrows the keys allowed, `given` holds what the caller checked itself."""
    spec = declared(cls)
    table = table_value(value, name, set(spec) if only is None else only)
    kinds = {f.name: str(f.type).split(" |")[0] for f in fields(cast(Any, cls))}
    kwargs = dict(given)
    for key, how in spec.items():
        if key in kwargs or key not in table or how.custom or how.section:
            continue
        where = f"{name}.{key}" if name else key
        raw, kind = table[key], kinds[key]
        if kind == "bool":
            kwargs[key] = bool_value(raw, where)
        elif how.choices:
            kwargs[key] = choice_value(raw, where, how.choices)
        elif kind == "int":
            kwargs[key] = int_value(raw, where, int(how.lo or 0), int(how.hi or 0))
        elif kind == "float":
            kwargs[key] = number_value(raw, where, float(how.lo or 0), float(how.hi or 0))
        else:
            kwargs[key] = text_value(raw, where)
    return cls(**kwargs)
