"""One definition per result type, and every JSON form derived from it.

A result is a dataclass that inherits `Jsonable`; its fields, in order, are its JSON object.
Field metadata (`field(metadata=json_meta(…))`) says what differs from that plain reading:

- `name` — the JSON key when it is not the field name (`label` → `citation`), and
  `names` per form (`{"mcp": "id"}`);
- `round` — digits floats keep in the printed forms (the wire keeps them whole);
- `omit` — a test on the object: true leaves the key out of the printed forms;
- `wire_only` — state a front end's copy needs but nobody prints (highlight terms);
- `flatten` — a nested result whose keys sit in the parent object;
- `description` — for schemas (the MCP server publishes them).

Three forms: `json` is what `--json` prints; `mcp` what the MCP tools return (the same but
for renamed keys); `wire` what the resident engine sends, which keeps every field so
`from_json` gives back an equal object. A class may add computed keys (`JSON_COMPUTED`) or be
printed as one of its fields (`JSON_SCALAR`, e.g. a note as its text).

Nothing here imports anything of the package or outside the standard library.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

Form = Literal["json", "mcp", "wire"]
FORMS: tuple[Form, ...] = ("json", "mcp", "wire")
T = TypeVar("T")
J = TypeVar("J", bound="Jsonable")
_META = "memories.json"


@dataclass(frozen=True)
class FieldSpec:
    """How one field appears in JSON (see the module docstring)."""

    name: str | None = None
    names: Mapping[str, str] = dataclasses.field(default_factory=dict)
    round: int | None = None
    omit: Callable[..., bool] | None = None
    wire_only: bool = False
    flatten: bool = False
    description: str | None = None


def json_meta(*, name: str | None = None, names: Mapping[str, str] | None = None, round: int | None = None,
              omit: Callable[..., bool] | None = None, wire_only: bool = False, flatten: bool = False,
              description: str | None = None) -> dict[str, FieldSpec]:
    """Metadata for `dataclasses.field(metadata=…)`: how the field appears in JSON."""
    return {_META: FieldSpec(name, dict(names or {}), round, omit, wire_only, flatten, description)}


@dataclass(frozen=True)
class JsonProperty:
    """One key of a result's JSON object in one form: what schemas are derived from."""

    key: str
    attribute: str
    type: object  # the resolved type hint
    description: str | None
    always: bool  # present in every object (no `omit`)


class Jsonable:
    """Mixin of every result type: `to_json()` (what `--json` prints), `to_wire()` (every field,
    for the resident engine) and `from_json()` (either, back into the type)."""

    JSON_COMPUTED: ClassVar[tuple[tuple[str, str, str | None], ...]] = ()  # (key, attribute, after key)
    JSON_SCALAR: ClassVar[str | None] = None  # printed forms show only this field

    def to_json(self, form: Form = "json") -> dict[str, object]:
        return _dump_object(self, form)

    def to_wire(self) -> dict[str, object]:
        return _dump_object(self, "wire")

    @classmethod
    def from_json(cls: type[J], data: object) -> J:
        return load(cls, data)


def dump(value: object, form: Form = "json") -> object:
    """Any result, list or mapping of results, in JSON-ready values."""
    if isinstance(value, Jsonable):
        scalar = type(value).JSON_SCALAR
        if scalar is not None and form != "wire":
            return dump(getattr(value, scalar), form)
        return _dump_object(value, form)
    if isinstance(value, list | tuple):
        return [dump(v, form) for v in value]
    if isinstance(value, dict):
        return {str(k): dump(v, form) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def _rounded(value: Any, digits: int) -> Any:
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


def _dump_object(obj: Any, form: Form) -> dict[str, Any]:
    out: dict[str, Any] = {}
    computed = {after: (key, attr) for key, attr, after in type(obj).JSON_COMPUTED}
    for field in dataclasses.fields(obj):
        spec = _spec(field)
        if spec.wire_only and form != "wire":
            continue
        value = getattr(obj, field.name)
        if spec.flatten:
            out.update(_dump_object(value, form))
            continue
        if form != "wire" and spec.omit is not None and spec.omit(obj):
            continue
        key = _key(field, spec, form)
        value = dump(value, form)
        if spec.round is not None and form != "wire":
            value = _rounded(value, spec.round)
        out[key] = value
        if key in computed and form != "wire":
            extra_key, attribute = computed[key]
            out[extra_key] = dump(getattr(obj, attribute), form)
    if form != "wire":
        for extra_key, attribute, after in type(obj).JSON_COMPUTED:
            if after is None:
                value = getattr(obj, attribute)
                if value is not None:
                    out[extra_key] = dump(value, form)
    return out


def _spec(field: dataclasses.Field[Any]) -> FieldSpec:
    spec = field.metadata.get(_META)
    return spec if isinstance(spec, FieldSpec) else FieldSpec()


def _key(field: dataclasses.Field[Any], spec: FieldSpec, form: Form) -> str:
    if form == "wire":
        return field.name  # the wire speaks the dataclass's own names: one reader for every form
    return spec.names.get(form) or spec.name or field.name


# -- reading JSON back -----------------------------------------------------------------------

def load(tp: type[T], data: object) -> T:
    """`data` (any form of `tp`'s JSON) as a value of type `tp`; ValueError when it does not fit."""
    result: T = _load(tp, data, "$")
    return result


def _load(tp: Any, data: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any or tp is object:
        return data
    if origin is typing.Union or origin is types.UnionType:
        options = typing.get_args(tp)
        if data is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _load(option, data, where)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors) or f"{where}: unexpected null")
    if origin is Literal:
        if data not in typing.get_args(tp):
            raise ValueError(f"{where}: {data!r} is not one of {typing.get_args(tp)}")
        return data
    if origin in (list, tuple, Sequence):  # a Sequence (an engine parameter) is read as a list
        if not isinstance(data, list):
            raise ValueError(f"{where}: expected a list")
        item = typing.get_args(tp)[0] if typing.get_args(tp) else Any
        items = [_load(item, v, f"{where}[{i}]") for i, v in enumerate(data)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object")
        value_type = typing.get_args(tp)[1] if typing.get_args(tp) else Any
        return {k: _load(value_type, v, f"{where}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _load_object(tp, data, where)
    if tp is Path:
        if not isinstance(data, str):
            raise ValueError(f"{where}: expected a path string")
        return Path(data)
    if tp is bytes:
        if not isinstance(data, str):
            raise ValueError(f"{where}: expected base64 text")
        return base64.b64decode(data.encode("ascii"), validate=True)
    if tp is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise ValueError(f"{where}: expected a number")
        return float(data)
    if tp in (int, str, bool):
        if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
            raise ValueError(f"{where}: expected {tp.__name__}")
        return data
    raise ValueError(f"{where}: cannot read {tp!r}")


def _load_object(cls: type, data: Any, where: str) -> Any:
    scalar = getattr(cls, "JSON_SCALAR", None)
    if scalar is not None and not isinstance(data, dict):
        return cls(**{scalar: data})  # a printed form: only the scalar field is known
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object for {cls.__name__}")
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        spec = _spec(field)
        if spec.flatten:
            values[field.name] = _load(hints[field.name], data, where)
            continue
        for key in (field.name, spec.name, *spec.names.values()):
            if key is not None and key in data:
                values[field.name] = _load(hints[field.name], data[key], f"{where}.{key}")
                break
        else:
            if field.default is MISSING and field.default_factory is MISSING:
                raise ValueError(f"{where}: {cls.__name__} needs {field.name!r}")
    return cls(**values)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


# -- schemas ---------------------------------------------------------------------------------

def properties(cls: type, form: Form = "json") -> Iterator[JsonProperty]:
    """The keys of `cls`'s JSON object in `form`, in order, with their types."""
    hints = _hints(cls)
    computed = {after: (key, attr) for key, attr, after in getattr(cls, "JSON_COMPUTED", ())}
    for field in dataclasses.fields(cls):
        spec = _spec(field)
        if spec.wire_only and form != "wire":
            continue
        if spec.flatten:
            yield from properties(hints[field.name], form)
            continue
        key = _key(field, spec, form)
        yield JsonProperty(key, field.name, hints[field.name], spec.description, spec.omit is None or form == "wire")
        if key in computed and form != "wire":
            extra_key, attribute = computed[key]
            yield JsonProperty(extra_key, attribute, _computed_type(cls, attribute), None, True)


def _computed_type(cls: type, attribute: str) -> Any:
    prop = getattr(cls, attribute)
    getter = prop.fget if isinstance(prop, property) else prop
    return typing.get_type_hints(getter).get("return", Any)
