"""Strict JSON for replies from model services: a reply we cannot trust is refused whole.

Duplicate keys (which value would win?), NaN/Infinity and numbers that overflow are all
refused with a ModelError, never guessed at.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..errors import ModelError
from ..i18n import msg


def _reject_constant(name: str) -> Any:
    raise ModelError(msg("The service returned JSON with a non-finite number ({name}).", name=name))


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ModelError(msg("The service returned JSON with a number out of range."))
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ModelError(msg("The service returned JSON with a duplicate key {key!r}.", key=key[:40]))
        out[key] = value
    return out


def strict_json(text: str | bytes) -> Any:
    """Parse JSON, rejecting duplicate keys, NaN/Infinity and overflowing numbers (ModelError)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ModelError(msg("The service returned a body that is not UTF-8 JSON.")) from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise ModelError(msg("The service returned malformed JSON ({problem} at position {pos}).",
                             problem=exc.msg, pos=exc.pos)) from None
    except RecursionError:
        raise ModelError(msg("The service returned JSON nested too deeply.")) from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise ModelError(msg("The service returned JSON we cannot use ({reason}).", reason=exc)) from None
