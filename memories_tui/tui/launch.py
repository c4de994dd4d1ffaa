"""The command line of `memories-tui [--home DIR] [--config FILE] [--lang LANG]`: its help and
argument errors in the reader's language (`--lang`, else `[ui] language`, else the locale),
and one line, never a traceback, when the app cannot start or stops on an error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .. import __version__
from ..errors import MemoriesError
from ..frontend.language_choice import choose_language
from ..i18n import SETTINGS, _
from . import crash


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    argv = list(sys.argv[1:] if argv is None else argv)
    choose_language(argv)  # for --help and argparse's errors, before the config is checked
    parser = argparse.ArgumentParser(prog="memories-tui", description=_("Memories: the terminal UI of your encrypted, "
                                                                        "local-first memory vault."))
    parser.add_argument("--home", help=_("Memories home folder (default: $MEMORIES_HOME or the platform data folder)"))
    parser.add_argument("--config", help=_("config file (default: HOME/config.toml)"))
    parser.add_argument("--lang", choices=SETTINGS, help=_("interface language: auto (from LC_ALL/LC_MESSAGES/LANG), "
                                                           "en, zh-Hant or zh-Hans"))
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser.parse_args(argv)


def run_guarded(run: Callable[[], int]) -> int:
    """`run()`'s status; a failure to start (a bad config) or to shut down is one line on stderr."""
    try:
        code = run()
    except MemoriesError as exc:
        print(f"memories-tui: {exc.localized()}", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:  # outside the app (start or shutdown): one line, never a traceback
        print(f"memories-tui: {crash.report(exc, None)}", file=sys.stderr)
        sys.exit(1)
    if code:
        sys.exit(code)
    return 0
