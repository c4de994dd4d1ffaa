"""Passphrase strength for the create-vault form and the CLI (shown as a guide, never enforced
beyond the 8-character minimum).

The estimate is zxcvbn's (the Dropbox algorithm, `zxcvbn` on PyPI): it finds dictionary
words, common passwords, names, keyboard walks, repeats, sequences, dates and l33t
substitutions and counts the guesses an attacker who tries those first would need. Counting
character classes instead rated `password12345678` "strong (~82 bits)". A few well-known
phrases (pangrams, famous quotes, the xkcd example) are added to its dictionaries, compared
without spaces and punctuation, since a famous sentence is no secret however long it is.

Labels assume the vault file itself may be stolen: an offline attacker, slowed only by
Argon2id. Bits = log2(guesses). zxcvbn knows no Chinese words: it counts each CJK character
as a tenth of a guess space (about 3.3 bits), so Chinese passphrases are rated cautiously.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from ..i18n import N_, _

SHORT = 8  # below this many characters the form asks for a confirmation
# zxcvbn's own bound (its cost grows quickly with length); a longer passphrase is rated by its start
MAX_RATED_CHARS = 72
# Argon2id (256 MiB, ~1 s per guess on a desktop core) holds an offline attacker to roughly
# thousands of guesses a second even with many machines: 2^32 guesses take weeks, 2^60 ages.
WEAK_BITS, FAIR_BITS, GOOD_BITS = 32, 45, 60

WELL_KNOWN_PHRASES = (
    "the quick brown fox jumps over the lazy dog", "correct horse battery staple", "to be or not to be",
    "to be or not to be that is the question", "lorem ipsum dolor sit amet", "may the force be with you",
    "hello world", "let me in", "open sesame", "i love you", "all your base are belong to us",
    "the cake is a lie", "winter is coming", "in god we trust", "carpe diem", "veni vidi vici",
    "i think therefore i am", "just do it", "live laugh love", "pack my box with five dozen liquor jugs",
    "sphinx of black quartz judge my vow", "the five boxing wizards jump quickly",
    "how vexingly quick daft zebras jump", "four score and seven years ago", "one small step for man",
    "one small step for a man one giant leap for mankind", "life is like a box of chocolates",
    "keep calm and carry on", "never gonna give you up", "there is no place like home", "you shall not pass",
)
_SEPARATORS = re.compile(r"[\W_]+")
# zxcvbn's warnings (its feedback.py), shown in the reader's language
WARNINGS = (
    N_("Straight rows of keys are easy to guess."), N_("Short keyboard patterns are easy to guess."),
    N_('Repeats like "aaa" are easy to guess.'),
    N_('Repeats like "abcabcabc" are only slightly harder to guess than "abc".'),
    N_('Sequences like "abc" or "6543" are easy to guess.'), N_("Recent years are easy to guess."),
    N_("Dates are often easy to guess."), N_("This is a top-10 common password."),
    N_("This is a top-100 common password."), N_("This is a very common password."),
    N_("This is similar to a commonly used password."), N_("A word by itself is easy to guess."),
    N_("Names and surnames by themselves are easy to guess."), N_("Common names and surnames are easy to guess."),
)


@dataclass(frozen=True)
class Strength:
    label: str  # "" for an empty passphrase
    bits: int
    style: str
    advice: str  # in the interface language (zxcvbn's warning first)


def _compact(text: str) -> str:
    return _SEPARATORS.sub("", text.lower())


_COMPACT_PHRASES = [_compact(p) for p in WELL_KNOWN_PHRASES]


@lru_cache(maxsize=256)
def _guesses_log2(passphrase: str) -> tuple[float, str]:
    """log2 of zxcvbn's guess count (the lower of the passphrase as typed and without its
    spaces and punctuation, so "Correct-Horse battery.staple" is found as well), and its warning."""
    from zxcvbn import zxcvbn  # loads its word lists (~0.1 s) on the first keystroke, not at start-up

    typed = passphrase[:MAX_RATED_CHARS]
    best = zxcvbn(typed, user_inputs=list(WELL_KNOWN_PHRASES), max_length=MAX_RATED_CHARS)
    compact = _compact(typed)
    if compact and compact != typed:
        other = zxcvbn(compact, user_inputs=_COMPACT_PHRASES, max_length=MAX_RATED_CHARS)
        if other["guesses_log10"] < best["guesses_log10"]:
            best = other
    return float(best["guesses_log10"]) * math.log2(10), str(best["feedback"].get("warning") or "")


def estimate(passphrase: str) -> Strength:
    if not passphrase:
        return Strength("", 0, "", "")
    bits_float, warning = _guesses_log2(passphrase)
    bits = int(bits_float)
    hint = _(warning) if warning else ""
    hint += " " if hint and not hint.endswith("。") else ""  # Chinese puts no space after its full stop
    if len(passphrase) < SHORT or bits < WEAK_BITS:
        return Strength("weak", bits, "bold red",
                        hint + _("Easy to guess. Five or more random words make a strong passphrase that is easy to "
                                 "remember."))
    if bits < FAIR_BITS:
        return Strength("fair", bits, "yellow", hint + _("Longer is better: add a word or two."))
    if bits < GOOD_BITS:
        return Strength("good", bits, "green", "")
    return Strength("strong", bits, "bold green", "")
