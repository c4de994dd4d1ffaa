"""TUI messages are dataclasses: their fields are declared once, typed, and printed in a
failing test's output, instead of hand-written __init__ methods that copy each argument."""

from __future__ import annotations

import importlib
import pkgutil

from textual.message import Message

import memories_tui.tui


def tui_messages() -> list[type[Message]]:
    for module in pkgutil.walk_packages(memories_tui.tui.__path__, "memories_tui.tui."):
        importlib.import_module(module.name)
    found: list[type[Message]] = []
    pending: list[type[Message]] = [Message]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.__module__.startswith("memories_tui."):
            found.append(cls)
    return found


def test_no_tui_message_writes_its_own_init() -> None:
    messages = tui_messages()
    assert {"BackupFinished", "LockedElsewhere", "HitChosen", "RecordSaved"} <= {m.__name__ for m in messages}
    handwritten = [m.__qualname__ for m in messages
                   if "__init__" in m.__dict__ and "__dataclass_fields__" not in m.__dict__]
    assert not handwritten, handwritten
