"""Which language a command (`memories`, `memories-tui`) speaks to people, chosen before its
parser is built (its help is translated too): `--lang`, else `[ui] language` in the config,
else the locale variables.

argparse's own words (`usage:`, `options`, "the following arguments are required") come
from its gettext calls; they are pointed at our catalog, whose entries for them are below.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..config import configured_language
from ..i18n import N_, _, _n, normalize_setting, resolve_language, set_language

# argparse's messages that people see, so the catalog holds them (argparse formats them with %)
ARGPARSE_TEXT = (
    N_("usage: "), N_("options"), N_("positional arguments"), N_("show this help message and exit"),
    N_("the following arguments are required: %s"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("unrecognized arguments: %s"), N_("expected one argument"), N_("expected at least one argument"),
    N_("expected at most one argument"), N_("invalid %(type)s value: %(value)r"),
    N_("argument %(argument_name)s: %(message)s"), N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"), N_("one of the arguments %s is required"),
    N_("ignored explicit argument %r"),
)


def choose_language(argv: Sequence[str]) -> str:
    """Set the interface language for this command and return it."""
    explicit = _option(argv, "--lang")
    try:
        setting = normalize_setting(explicit) if explicit is not None else None
    except ValueError:
        setting = None  # the parser reports the bad value, in the language chosen without it
    if setting is None:
        setting = configured_language(_option(argv, "--home"), _option(argv, "--config"))
    language = resolve_language(setting)
    set_language(language)
    setattr(argparse, "_", _)  # noqa: B010 (argparse looks these names up at call time)
    setattr(argparse, "ngettext", _n)  # noqa: B010
    return language


def _option(argv: Sequence[str], name: str) -> str | None:
    """The value of `name VALUE` or `name=VALUE` before `--` (the last one wins, as in argparse)."""
    words = list(argv[: argv.index("--") if "--" in argv else len(argv)])
    found = None
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith(name + "="):
            found = word[len(name) + 1:]
    return found
