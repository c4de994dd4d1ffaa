"""A rough passphrase-strength estimate for the create-vault form (shown, never enforced).

Bits = length × log2(size of the character classes used), capped for repetitive input. It is a
guide for people, not an attack model: a dictionary phrase scores higher than it deserves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SHORT = 8  # below this many characters the form asks for a confirmation


@dataclass(frozen=True)
class Strength:
    label: str  # "" for an empty passphrase
    bits: int
    style: str
    advice: str


def _pool(passphrase: str) -> int:
    pool = 0
    if any(c.islower() for c in passphrase):
        pool += 26
    if any(c.isupper() for c in passphrase):
        pool += 26
    if any(c.isdigit() for c in passphrase):
        pool += 10
    if any(not c.isalnum() and ord(c) < 128 for c in passphrase):
        pool += 33
    if any(ord(c) >= 128 and c.isalpha() for c in passphrase):
        pool += 1000  # CJK and other scripts: a large alphabet
    return max(pool, 2)


def estimate(passphrase: str) -> Strength:
    if not passphrase:
        return Strength("", 0, "", "")
    length = len(passphrase)
    bits = length * math.log2(_pool(passphrase))
    distinct = len(set(passphrase))
    if distinct <= 3:  # "aaaaaaaa", "abababab"
        bits = min(bits, distinct * 4.0 + math.log2(length))
    bits_int = int(bits)
    if length < SHORT or bits_int < 36:
        return Strength("weak", bits_int, "bold red",
                        "Easy to guess. Four or more random words are strong and easy to remember.")
    if bits_int < 60:
        return Strength("fair", bits_int, "yellow", "Longer is better: add a word or two.")
    if bits_int < 80:
        return Strength("good", bits_int, "green", "")
    return Strength("strong", bits_int, "bold green", "")
