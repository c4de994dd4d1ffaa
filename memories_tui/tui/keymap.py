"""`[tui.keys]`: the user's keymap (binding id → keys), applied at start through Textual's
public App.set_keymap; an id no binding carries is named in a one-line notice, not an error."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from textual.app import App
from textual.dom import DOMNode

from ..i18n import _


def known_ids() -> set[str]:
    """The ids of every binding of the app and its screens and widgets."""
    from . import screens, widgets
    for package in (screens, widgets):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    ids: set[str] = set()
    pending: list[type] = [DOMNode]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("memories_tui."):
            for binding in cls.__dict__.get("BINDINGS", ()):
                if getattr(binding, "id", None):
                    ids.add(binding.id)
    return ids


def apply_keymap(app: App[Any], keys: dict[str, str]) -> None:
    if not keys:
        return
    app.set_keymap(dict(keys))
    unknown = sorted(set(keys) - known_ids())
    if unknown:
        app.notify(_("[tui.keys]: no key binding has the id {ids}; known ids: {known}.").format(
            ids=", ".join(unknown), known=", ".join(sorted(known_ids()))), severity="warning", markup=False)
