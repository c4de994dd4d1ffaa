"""The command palette's language switch and Textual's own words in the reader's language.

Bindings, Textual's palette commands and the palette's prompt carry English marked with
`N_()` and are translated where they are shown (the footer, the help, the palette), so a
switch makes no binding again: the screens are drawn again and show the new words.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.widgets import HelpPanel

from ..i18n import LANGUAGE_NAMES, N_, _, resolve_language, set_language
from .text import tilde
from .textual_adapter import WordedBindingsTable, WordedHelpPanel, WordedKeyPanel, WordedPalette

# Textual's own words that people see: its key descriptions (footer, help) and palette commands.
TEXTUAL_TEXT = (
    N_("palette"), N_("Focus Next"), N_("Focus Previous"), N_("Copy selected text"),
    N_("Theme"), N_("Change the current theme"), N_("Quit the application as soon as possible"),
    N_("Keys"), N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"), N_("Minimize the widget and restore to normal size"), N_("Maximize"),
    N_("Maximize the focused widget"), N_("Screenshot"), N_("Save an SVG 'screenshot' of the current screen"),
    # the key panel's rows for the lists and tables (Textual's DataTable and OptionList)
    N_("Cursor up"), N_("Cursor down"), N_("Cursor left"), N_("Cursor right"), N_("Home"), N_("End"),
    N_("Page up"), N_("Page down"), N_("Page Left"), N_("Page Right"), N_("Select"), N_("Top"), N_("Bottom"),
)


class Palette(WordedPalette):
    def no_matches_text(self) -> str:
        return _("No matches found")


class KeysTable(WordedBindingsTable):
    def relabel(self, text: str) -> str:
        return _(text) if text else text


class KeysPanel(WordedKeyPanel):
    table_class = KeysTable


class KeysHelpPanel(WordedHelpPanel):
    key_panel_class = KeysPanel


class LanguageActions(App):
    """Mixed into the app (before App): Textual's palette in the reader's language, and the
    palette's language switch, kept in config.toml and shown at once."""

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            yield SystemCommand(_(command.title), _(command.help), command.callback, command.discover)

    def action_command_palette(self) -> None:
        if self.use_command_palette and not Palette.is_open(self):
            self.push_screen(Palette(placeholder=_("Search for commands…"), id="--command-palette"))

    def action_show_help_panel(self) -> None:
        """Textual's keys panel (palette → Keys), its descriptions in the reader's language."""
        if not self.screen.query(HelpPanel):
            self.screen.mount(KeysHelpPanel())

    async def action_switch_language(self, setting: str) -> None:
        """Keep `[ui] language = setting` and show every screen in it now. The screens above the
        vault picker close (as the palette's other commands close them); an unlocked vault stays
        unlocked and its records screen comes back, a locked home shows its first screen again."""
        from ..errors import ConfigError
        from ..frontend.language_setting import save_language

        app: Any = self  # the MemoriesApp this is mixed into
        if app.busy_work():
            self.notify(_("An import, model download, vault creation or backup is running: switch the language "
                          "when it has finished."), severity="warning", markup=False)
            return
        try:
            save_language(app.engine.config.path, setting)
        except ConfigError as exc:
            self.notify(exc.localized(), severity="error", markup=False)
            return
        language = resolve_language(setting)
        set_language(language)
        await self.redraw_screens()
        self.notify(_("Interface language: {name} (kept in {path}).").format(
            name=LANGUAGE_NAMES[language], path=tilde(app.engine.config.path)), markup=False)

    async def redraw_screens(self) -> None:
        from .screens.vaults import VaultPickerScreen

        app: Any = self
        while len(self.screen_stack) > 1:
            await self.pop_screen()
        picker = self.screen
        if isinstance(picker, VaultPickerScreen):
            await picker.rebuild()
        self.refresh_bindings()
        if app.vault is not None:
            await app._show_records(app.vault)
            return
        first = app._choose_first_screen()  # as at start: the create form, or the only vault's unlock screen
        if first is not None:
            await self.push_screen(first)
