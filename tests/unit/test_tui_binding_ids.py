"""Every key binding of the TUI has an id, and an id names one action: `[tui.keys]` in the
config rebinds keys by these ids, so a binding without one cannot be remapped, and an id two
actions share would move both when a user meant one."""

from __future__ import annotations

from collections import defaultdict

from textual.app import App
from textual.binding import Binding

import memories_tui.tui.app  # noqa: F401 - declares the app's bindings
from memories_tui.tui.keymap import declared_bindings

# The key that opens the help closes it again: the help screen's closing keys carry the ids of
# the app's keys that open it, so a remapped help key does both.
OPEN_AND_CLOSE = {"help": {"app.help", "close"}, "help.question": {"app.help", "close"}}


def qualified_action(cls: type, binding: Binding) -> str:
    """The action as one name everywhere: an app binding's `quit` is the screens' `app.quit`."""
    if issubclass(cls, App) and not binding.action.startswith(("app.", "screen.")):
        return f"app.{binding.action}"
    return binding.action


def test_the_walk_finds_the_bindings_of_the_app_its_screens_and_their_widgets() -> None:
    found = {(cls.__name__, b.id) for cls, b in declared_bindings() if isinstance(b, Binding)}
    assert {("MemoriesApp", "quit"), ("RecordsScreen", "search"), ("FileTree", "ingest.up"),
            ("HelpScreen", "help.close")} <= found
    assert len(found) > 60


def test_every_tui_binding_has_an_id() -> None:
    missing = [f"{cls.__qualname__}: {binding}" for cls, binding in declared_bindings()
               if not isinstance(binding, Binding) or not binding.id]
    assert not missing, "bindings without an id (users cannot remap them in [tui.keys]):\n" + "\n".join(missing)


def test_an_id_is_used_once_per_class() -> None:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for cls, binding in declared_bindings():
        if isinstance(binding, Binding) and binding.id:
            counts[(cls.__qualname__, binding.id)] += 1
    assert not [key for key, n in counts.items() if n > 1]


def test_one_id_names_one_action_wherever_it_is_bound() -> None:
    actions: dict[str, set[str]] = defaultdict(set)
    for cls, binding in declared_bindings():
        if isinstance(binding, Binding) and binding.id:
            actions[binding.id].add(qualified_action(cls, binding))
    shared = {bid: sorted(names) for bid, names in actions.items()
              if len(names) > 1 and OPEN_AND_CLOSE.get(bid) != names}
    assert not shared, f"ids given to different actions: {shared}"
    for bid, names in OPEN_AND_CLOSE.items():
        assert actions[bid] == names, bid
    assert len(actions["back"]) == 1  # escape goes back on every screen, one id for all of them
