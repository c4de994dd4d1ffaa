"""Helpers for driving the TUI with Pilot (shared by the tests under tests/tui)."""

from __future__ import annotations

import time

from rich.text import Text
from textual.widgets import Input, Static

PASS = "correct horse battery staple"


async def wait_for(pilot, predicate, timeout: float = 60.0) -> None:
    """Wait for a condition, never for a fixed time; `timeout` only stops a hung test on a loaded machine."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached in time; screen={pilot.app.screen!r} "
                                 f"stack={pilot.app.screen_stack}")
        await pilot.pause(0.02)


def static_text(widget: Static) -> str:
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


async def type_text(pilot, widget: Input, text: str) -> None:
    widget.focus()
    widget.value = text
    await pilot.pause()


def footer_keys(screen) -> dict[str, str]:
    """description → key as the footer shows them right now."""
    from textual.widgets._footer import FooterKey

    return {key.description: key.key_display for key in screen.query(FooterKey)}
