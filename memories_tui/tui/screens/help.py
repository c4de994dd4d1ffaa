"""F1 / `?`: every key of the screen underneath, and how to use that screen.

The list is built from the live binding maps of that screen and of the app, so it can never
disagree with the footer: a binding whose action is disabled right now (e.g. lock with no
vault unlocked) is left out, exactly as the footer leaves it out. Below it, how to remap keys
(`[tui.keys]` in the config) and the id and current keys of each binding there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from rich.cells import cell_len
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from ... import __version__
from ...i18n import N_, _, _n
from ..text import tilde
from ..textual_adapter import node_bindings
from ..wrap import BrokenLines, Hanging

if TYPE_CHECKING:
    from ..app import MemoriesApp

VERSION = f"Memories {__version__}"  # the version people quote in a bug report
# Textual's own screen keys (focus moves, copy) go after the screen's and the app's keys.
GENERIC_ACTIONS = frozenset(b.action.removeprefix("app.") for b in Screen.BINDINGS if isinstance(b, Binding))


@dataclass(frozen=True)
class KeyHelp:
    keys: str
    description: str


def _enabled(node: DOMNode, binding: Binding) -> bool:
    action = binding.action
    target: DOMNode = node
    if action.startswith("app."):
        target, action = node.app, action[4:]
    elif action.startswith("screen."):
        target, action = node.screen, action[7:]
    name, _, _args = action.partition("(")
    return bool(target.check_action(name, ()))


def screen_keys(screen: Screen, app: App) -> list[KeyHelp]:
    """Every described, enabled binding of `screen` then of `app`; keys of one action are joined."""
    by_action: dict[tuple[str, str], KeyHelp] = {}
    for node in (screen, app):
        for key, binding in node_bindings(node):
            if not binding.description or binding.system or not _enabled(node, binding):
                continue
            shown = app.get_key_display(Binding(key, binding.action, key_display=binding.key_display))
            # a screen's key for an app action (`app.open_model`) and the app's own key for it
            # are one entry ("m / f2"), not two
            action = binding.action.removeprefix("app.") if node is screen else binding.action
            slot = ("app" if node is app or binding.action.startswith("app.") else "screen", action)
            old = by_action.get(slot)
            if old is None:
                description, tooltip = _(binding.description), _(binding.tooltip) if binding.tooltip else ""
                detail = _("{description}: {tooltip}").format(description=description, tooltip=tooltip) \
                    if tooltip else description
                by_action[slot] = KeyHelp(shown, detail)
            elif shown not in old.keys.split(" / "):
                by_action[slot] = KeyHelp(f"{old.keys} / {shown}", old.description)
    specific = [help for (_, action), help in by_action.items() if action not in GENERIC_ACTIONS]
    generic = [help for (_, action), help in by_action.items() if action in GENERIC_ACTIONS]
    return specific + generic


@dataclass(frozen=True)
class KeyId:
    id: str
    keys: str  # as a [tui.keys] line writes them: "ctrl+s,f6"


def binding_ids(screen: Screen, app: App) -> list[KeyId]:
    """The id and current keys (the user's keymap applied) of every binding of `screen`, of its
    widgets and of the app, disabled ones too: what a [tui.keys] line names and what it changes.
    Sorted by id within each of them (a remapped binding would otherwise move to the end)."""
    found: dict[str, str] = {}
    for node in (screen, *screen.walk_children(), app):
        keys: dict[str, list[str]] = {}
        for key, binding in node_bindings(node):
            if binding.id and binding.id not in found and key not in keys.setdefault(binding.id, []):
                keys[binding.id].append(key)
        found.update((bid, ",".join(keys[bid])) for bid in sorted(keys))
    return [KeyId(bid, bound) for bid, bound in found.items()]


def screen_title(screen: Screen) -> str:
    title = getattr(screen, "HELP_TITLE", "")  # marked with N_(): translated here
    return _(title) if title else type(screen).__name__.removesuffix("Screen")


class HelpScreen(ModalScreen[None]):
    """A modal over the current screen; esc, F1, `?` or q closes it."""

    BINDINGS = [
        Binding("escape", "close", N_("Close help"), id="help.close"),
        # the keys that open the help close it, under the same ids: a remapped help key does both
        Binding("f1", "close", N_("Close help"), id="help", show=False),
        Binding("question_mark", "close", N_("Close help"), id="help.question", show=False),
        Binding("q", "close", N_("Close help"), id="help.close.alt", show=False),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help-box { width: 90%; max-width: 96; height: auto; max-height: 90%; border: round $accent;
                background: $surface; padding: 0 1; }
    #help-scroll { height: auto; }
    #help-title { text-style: bold; height: auto; margin-bottom: 1; }
    #help-guide { height: auto; margin-bottom: 1; }
    #help-keys { height: auto; }
    #help-ids { height: auto; margin-top: 1; }
    #help-foot { height: 1; color: $text-muted; }
    """

    def __init__(self, target: Screen) -> None:
        super().__init__()
        self.target = target
        self.keys = screen_keys(target, target.app)
        self.ids = binding_ids(target, target.app)

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text(_("Keys · {screen}").format(screen=screen_title(self.target))), id="help-title")
            with VerticalScroll(id="help-scroll"):
                guide = getattr(self.target, "GUIDE", "")
                if guide:
                    yield Static(BrokenLines(Text(_(guide))), id="help-guide")
                yield Static(self._key_table(), id="help-keys")
                yield Static(self._id_table(), id="help-ids")
            yield Static(Text(_("esc closes this help") + f" · {VERSION}"), id="help-foot")

    def on_mount(self) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        self.set_focus(scroll)  # ↑/↓ and page up/down scroll a help taller than the screen
        self.watch(scroll, "scroll_y", lambda _: self._say_more(), init=False)
        self.call_after_refresh(self._say_more)

    def on_resize(self) -> None:
        # the box may take 90% of the height: its border (2), title (2) and last line (1) stay
        # visible and the keys scroll in the rest (a max-height in CSS let the last line fall off)
        self.query_one("#help-scroll").styles.max_height = max(3, int(self.size.height * 0.9) - 5)
        self.call_after_refresh(self._say_more)

    def _say_more(self) -> None:
        """The last line says when part of the help is below the box, and how to see it."""
        scroll = self.query_one("#help-scroll", VerticalScroll)
        below = scroll.max_scroll_y - round(scroll.scroll_y)
        foot = Text()
        if below > 0:  # shorter words then, so the line fits an 80-column help
            foot.append(_n("↓ {n} more line: ↓ or page down", "↓ {n} more lines: ↓ or page down", below).format(
                n=below), style="bold")
            foot.append(" · " + _("esc closes") + f" · {VERSION}")
        else:
            foot.append(_("esc closes this help") + f" · {VERSION}")
        self.query_one("#help-foot", Static).update(foot)

    def _key_table(self) -> Hanging:
        width = max((cell_len(k.keys) for k in self.keys), default=8) + 2  # cells: key names may be wide
        return Hanging([(Text(item.keys, style="bold cyan"), Text(item.description)) for item in self.keys], width)

    def _id_table(self) -> Hanging:
        config = tilde(cast("MemoriesApp", self.target.app).engine.config.path)
        head = Text(_("Your own keys ([tui.keys])"), style="bold")
        head.append("\n")
        head.append(_("Every key has an id. To change keys, give the id the keys you want in the [tui.keys] "
                      "table of {config}, e.g. \"search\" = \"ctrl+s\" (two keys: \"ctrl+s,f6\"); "
                      "Memories reads it when it starts. The ids of this screen and their keys now:").format(
            config=config))
        width = max((cell_len(item.id) for item in self.ids), default=8) + 2
        return Hanging([(Text(item.id), Text(item.keys, style="bold cyan")) for item in self.ids], width, head=head)

    def action_close(self) -> None:
        self.dismiss(None)
