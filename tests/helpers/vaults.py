"""In-process fixtures: a home with cheap KDF parameters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memories_tui.vault import crypto

CHEAP = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)


@contextmanager
def cheap_kdf() -> Iterator[None]:
    previous = crypto._TEST_KDF_OVERRIDE
    crypto._TEST_KDF_OVERRIDE = CHEAP
    try:
        yield
    finally:
        crypto._TEST_KDF_OVERRIDE = previous
