"""File names that are safe on every common OS (Linux, macOS, Windows) and unique in a folder.

Backups are named after their vault and exports after their records' titles; either can
hold any printable text, so the text is made safe here rather than trusted: no path
separators or characters Windows forbids, no control characters, no trailing dot or space,
no reserved device names (CON, NUL, COM1 …), a bounded UTF-8 length, and uniqueness that
holds on case-insensitive, normalising file systems (macOS, Windows) as well.
"""

from __future__ import annotations

import re
import unicodedata

_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f\u0080-\u009f\u2028\u2029]')
_SPACES = re.compile(r"\s+")
# Windows also reserves COM/LPT with a superscript digit (COM¹ is a device, not a file) and
# the console's CONIN$/CONOUT$.
_DIGITS = (*(str(i) for i in range(10)), "\u00b9", "\u00b2", "\u00b3")
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", *(f"COM{d}" for d in _DIGITS),
                       *(f"LPT{d}" for d in _DIGITS)})
MAX_STEM_BYTES = 120  # leaves room for a suffix and an extension under every OS's 255-byte limit


def safe_stem(text: str, *, fallback: str = "untitled", max_bytes: int = MAX_STEM_BYTES) -> str:
    """`text` as a file name stem (no extension) that every OS accepts; never empty."""
    stem = unicodedata.normalize("NFC", text)
    stem = "".join(ch for ch in stem if not (0xD800 <= ord(ch) <= 0xDFFF) and unicodedata.category(ch) != "Cf")
    stem = _SPACES.sub(" ", _FORBIDDEN.sub("_", stem)).strip(" .")
    stem = _fit(stem, max_bytes).rstrip(" .")
    if stem.startswith("-"):
        stem = "_" + stem[1:]  # a leading dash reads as an option on a command line
    if not stem:
        stem = fallback
    if stem.split(".")[0].rstrip(" ").upper() in _RESERVED:  # Windows ignores spaces before the dot
        stem = "_" + stem
    return stem


def _fit(text: str, max_bytes: int) -> str:
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text
    return raw[:max_bytes].decode("utf-8", "ignore")


def name_key(name: str) -> str:
    """What two names must not share in one folder: case-folded, NFC (macOS stores NFD)."""
    return unicodedata.normalize("NFC", name).casefold()


def unique_name(stem: str, extension: str, taken: set[str]) -> str:
    """`stem + extension`, or `stem-2 + extension`, … : the first whose `name_key` is not in
    `taken`; the chosen key is added to `taken`."""
    candidate = stem + extension
    number = 1
    while name_key(candidate) in taken:
        number += 1
        candidate = f"{stem}-{number}{extension}"
    taken.add(name_key(candidate))
    return candidate
