"""Where keys go: tab in a screen's own order, and keys held while a vault unlocks.

Both exist for keys typed in one burst (a paste, a password manager's auto-type): each must
reach the widget that has the focus after the keys before it, so focus moves at once and keys
meant for the next screen wait for it instead of landing in the passphrase field.
"""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.widget import Widget

NEVER_HELD = frozenset({"ctrl+q"})  # quit works while keys wait for the unlock


class KeyRouting(App):
    """Mixed into the app (before App)."""

    _held: list[events.Key | events.Paste] | None = None  # see hold_keys
    _holds = 0  # counts hold_keys calls: a release queued before a newer hold leaves that hold alone

    async def on_event(self, event: events.Event) -> None:
        if self._held is not None and isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            if not (isinstance(event, events.Key) and event.key in NEVER_HELD):
                self._held.append(event)  # typed for the screen after the unlock
                return
        await super().on_event(event)

    # -- keys typed while a vault unlocks ------------------------------------------------------
    def hold_keys(self) -> None:
        """Keys and pastes from now on wait (quit still works): they were typed for the screen
        that follows the unlock, not for the passphrase field."""
        self._holds += 1
        if self._held is None:
            self._held = []

    def release_keys(self, *, replay: bool) -> None:
        """Stop holding keys; `replay` sends the held ones on, in order, as if typed now (after
        a failed unlock they are dropped: they were not meant for the passphrase field).

        The release waits its turn in the app's queue: keys of the same burst may still be
        queued there (a fast derivation finishes before the app has read them all), and they
        belong with the held ones, not in the passphrase field."""
        self.call_later(self._release_held, self._holds, replay)

    def _release_held(self, holds: int, replay: bool) -> None:
        if holds != self._holds:  # held again since: that hold's own release decides
            return
        held, self._held = self._held or [], None
        if not replay:
            return
        for event in held:
            self.post_message(events.Key(event.key, event.character) if isinstance(event, events.Key)
                              else events.Paste(event.text))

    # -- tab order ---------------------------------------------------------------------------------
    def action_focus_next(self) -> None:
        if not self._focus_in_order(1):
            self.screen.focus_next()

    def action_focus_previous(self) -> None:
        if not self._focus_in_order(-1):
            self.screen.focus_previous()

    def _focus_in_order(self, step: int) -> bool:
        """Tab and shift+tab follow a screen's own `focus_order()` when it has one (the search
        screen: query, the result panes, then the match-mode selector); at once, so keys typed
        right after tab reach the new widget."""
        order_of = getattr(self.screen, "focus_order", None)
        if order_of is None:
            return False
        order: list[Widget] = [w for w in order_of() if w.focusable]
        focused = self.screen.focused
        if not order or focused is None:
            return False
        here = next((n for n, w in enumerate(order) if focused is w or w in focused.ancestors), None)
        if here is None:
            return False
        self.screen.set_focus(order[(here + step) % len(order)])
        return True

