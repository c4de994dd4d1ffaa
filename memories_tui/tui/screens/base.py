"""Shared screen plumbing: the engine, the lock epoch, and dropping late worker results."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import Binding
from textual.screen import Screen

from ...errors import MemoriesError
from .. import crash
from ..messages import WorkerMessage
from ..text import tilde_paths

if TYPE_CHECKING:
    from ...engine import Engine
    from ..app import MemoriesApp


SHORT_TERMINAL_ROWS = 34  # below this a form's bordered fields (3 rows each) no longer fit


def compact_when_short(screen: Screen) -> bool:
    """Borderless fields, buttons and checkboxes while the terminal is short, so a form or a
    dialog fits in 24 rows; True when they are."""
    compact = screen.size.height < SHORT_TERMINAL_ROWS
    for widget in screen.query("Input, Button, Checkbox"):
        widget.compact = compact  # type: ignore[attr-defined]
    return compact


class EnterMovesOn(Screen):
    """Forms and dialogs: enter in field `id` focuses the selector ENTER_NEXT maps it to (or
    `enter_target` says). Screens with a mapping add ENTER_BINDING: a priority binding moves the
    focus before the keys typed after enter are routed (a paste, a password manager's auto-type),
    where Input.Submitted came after them, in the old field. Enter in a field with no next one
    passes on to it (Input.Submitted: the form's own action)."""

    ENTER_NEXT: ClassVar[dict[str, str]] = {}
    ENTER_BINDING = Binding("enter", "next_field", id="form.next_field", show=False, priority=True)

    def enter_target(self) -> str | None:
        return self.ENTER_NEXT.get(self.focused.id or "") if self.focused is not None else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter passes on to the focused widget unless it is a field with a next one."""
        return self.enter_target() is not None if action == "next_field" else True

    def action_next_field(self) -> None:
        target = self.enter_target()
        if target is not None:
            self.set_focus(self.query_one(target))  # now: widget.focus() would wait a turn


class EngineScreen(EnterMovesOn):
    """A screen that talks to the engine."""

    @property
    def memories(self) -> MemoriesApp:
        return self.app  # type: ignore[return-value]

    @property
    def engine(self) -> Engine:
        return self.memories.engine

    def describe(self, exc: BaseException) -> str:
        """The line to show for a failed task: an engine error's own message; anything else is
        a bug, named by type and place only (its text may quote a note) and logged in the home."""
        if isinstance(exc, MemoriesError):
            return tilde_paths(exc.localized())
        return crash.report(exc, self.engine.home, stopped=False)

    def epoch(self) -> int:
        return self.engine.lock_epoch

    def epoch_live(self, epoch: int) -> bool:
        return epoch == self.engine.lock_epoch

    def post_if_live(self, message: WorkerMessage) -> None:
        """Called from a worker thread: post only if nothing was locked since the work started."""
        if self.epoch_live(message.epoch):
            self.post_message(message)


class VaultScreen(EngineScreen):
    """A screen showing data of one unlocked vault; every VaultScreen is popped on lock."""

    def __init__(self, vault_id: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.vault_id = vault_id

    def epoch_live(self, epoch: int) -> bool:
        return epoch == self.engine.lock_epoch and self.engine.is_unlocked(self.vault_id)

    def on_mount(self) -> None:
        """The header names the vault (Textual runs this besides a subclass's own on_mount)."""
        if self.engine.is_unlocked(self.vault_id):
            self.sub_title = self.engine.vault_name(self.vault_id)
