"""Typing paths in the ingest field: completion of the last path typed, and splitting the field.

The field holds paths separated by spaces (a path with spaces is quoted). The suggestion
completes the last one from the file system, as far as it is unambiguous (the common prefix
of the names that match, like a shell's tab), with a `/` after a folder; right arrow or end
accepts it. `~` is kept as typed. Dot-files are offered only when the name typed starts with
a dot.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from textual.suggester import Suggester

MAX_ENTRIES = 2_000  # a folder bigger than this is not listed for a suggestion


def parse_paths(value: str) -> list[Path]:
    """Paths separated by spaces; quote a path that contains spaces. `~` is expanded."""
    return [Path(p).expanduser() for p in shlex.split(value)]


def _last_word(value: str) -> tuple[str, str, bool] | None:
    """(what comes before the last path, the last path as typed, whether it is inside an open
    double quote); None when there is nothing to complete (empty, or after a space)."""
    if value.count('"') % 2:  # `"my no` → complete inside the quotes
        cut = value.rfind('"') + 1
        return value[:cut], value[cut:], True
    if not value or value.endswith(" ") or "'" in value:
        return None
    cut = value.rfind(" ") + 1
    return value[:cut], value[cut:], False


def complete(typed: str, cwd: Path | None = None) -> str | None:
    """`typed` (one path) completed as far as the file system makes it unambiguous, or None."""
    folder_part, _, stem = typed.rpartition("/")
    folder_text = folder_part + "/" if typed.startswith("/") or folder_part else ""
    if typed.startswith("/") and not folder_part:
        folder_text = "/"
    folder = Path(folder_text or ".").expanduser()
    if not folder.is_absolute():
        folder = (cwd or Path.cwd()) / folder
    try:
        with os.scandir(folder) as entries:
            names = []
            for n, entry in enumerate(entries):
                if n >= MAX_ENTRIES:
                    return None
                if entry.name.startswith(stem) and (stem.startswith(".") or not entry.name.startswith(".")):
                    names.append((entry.name, entry.is_dir()))
    except OSError:
        return None
    if not names:
        return None
    common = os.path.commonprefix([name for name, _ in names])
    if len(names) == 1 and names[0][1]:
        common += "/"
    if len(common) <= len(stem):
        return None
    return folder_text + common


class PathSuggester(Suggester):
    """Suggests the field's value with its last path completed (see `complete`)."""

    def __init__(self, cwd: Path | None = None) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.cwd = cwd

    async def get_suggestion(self, value: str) -> str | None:
        split = _last_word(value)
        if split is None:
            return None
        before, last, quoted = split
        done = complete(last, self.cwd)
        if done is None or (" " in done and not quoted):  # a name with spaces: type a " first
            return None
        return before + done
