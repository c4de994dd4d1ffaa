"""`[tui.keys]`: the user's keymap (binding id → keys), applied at start through Textual's
public App.set_keymap; an id no binding carries is named in a one-line notice, not an error."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode

from ..i18n import _


def declared_bindings() -> Iterator[tuple[type, Binding | tuple[str, ...]]]:
    """(class, binding) for every binding declared by the app (its module imported: the app
    calls this) and its screens and widgets."""
    from . import screens, widgets
    for package in (screens, widgets):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    pending: list[type] = [DOMNode]
    seen: set[type] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("memories_tui."):
            for binding in cls.__dict__.get("BINDINGS", ()):
                yield cls, binding


def known_ids() -> set[str]:
    """The ids of every binding of the app and its screens and widgets."""
    return {binding.id for _cls, binding in declared_bindings() if isinstance(binding, Binding) and binding.id}


def apply_keymap(app: App[Any], keys: dict[str, str]) -> None:
    if not keys:
        return
    app.set_keymap(dict(keys))
    unknown = sorted(set(keys) - known_ids())
    if unknown:
        app.notify(_("[tui.keys]: no key binding has the id {ids}; known ids: {known}.").format(
            ids=", ".join(unknown), known=", ".join(sorted(known_ids()))), severity="warning", markup=False)
