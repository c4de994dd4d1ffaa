"""The MCP tools' output schemas, derived from the result types' one definition.

The SDK publishes a tool's `outputSchema` from a pydantic model and checks the structured
content against it; the model here is built from the dataclass and its JSON metadata (keys,
descriptions, which keys are always there), never written by hand.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..engine import json_properties

_MODELS: dict[type, type[BaseModel]] = {}


def output_model(cls: type) -> type[BaseModel]:
    """A pydantic model of `cls`'s `mcp` JSON form (nested results become nested models)."""
    if cls in _MODELS:
        return _MODELS[cls]
    fields: dict[str, Any] = {}
    for prop in json_properties(cls, "mcp"):
        annotation = _annotation(prop.type)
        if prop.always:
            fields[prop.key] = (annotation, Field(description=prop.description))
        else:
            fields[prop.key] = (annotation | None, Field(default=None, description=prop.description))
    model: type[BaseModel] = create_model(cls.__name__, __config__=ConfigDict(extra="forbid"), **fields)
    _MODELS[cls] = model
    return model


def _annotation(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        converted = tuple(_annotation(a) for a in args)
        return functools.reduce(lambda a, b: a | b, converted[1:], converted[0])
    if origin is Literal:
        return tp
    if origin in (list, tuple):
        return list[_annotation(args[0])] if args else list[Any]  # type: ignore[misc]
    if origin is dict:
        return dict[str, _annotation(args[1])]  # type: ignore[misc]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        scalar = getattr(tp, "JSON_SCALAR", None)
        if scalar is not None:  # printed as one of its fields (a note as its text)
            return _annotation(typing.get_type_hints(tp)[scalar])
        return output_model(tp)
    if tp is Path or tp is bytes:
        return str
    return tp
