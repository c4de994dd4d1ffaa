"""The CLI's `--lang` option; the language itself is chosen by frontend/language_choice.py
(shared with `memories-tui`)."""

from __future__ import annotations

from ..frontend.language_choice import choose_language as choose_language
from ..i18n import N_, SETTINGS

LANG_HELP = N_("interface language: auto (from LC_ALL/LC_MESSAGES/LANG), en, zh-Hant or zh-Hans; "
               "--json output stays English")
LANG_CHOICES = SETTINGS
