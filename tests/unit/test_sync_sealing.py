"""What a sealed sync object may hold once opened: JSON that any text field can store. A device
holding the key could seal half a UTF-16 surrogate pair (JSON allows the escape); opening it is
refused as tampering, never an encoding traceback later when the text is written."""

from __future__ import annotations

import os

import pytest

from memories_tui.errors import SyncTamperedError
from memories_tui.sync.sealing import NONCE_BYTES, Head, head_ad, seal, unseal
from memories_tui.vault.keys import VaultKeys


def _sealed_raw(aead, plain: bytes, ad: bytes) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + aead.encrypt(nonce, plain, ad)


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\uDFFF", b"x\\udbff y", b"\\ude00\\ud83d"])
def test_a_lone_surrogate_escape_is_refused_as_tampering(escape: bytes) -> None:
    keys = VaultKeys(bytearray(range(32)), "0123456789abcdef")
    aead, device = keys.sync_aead("head"), "fedcba9876543210"
    ad = head_ad(keys.vault_id, device)
    blob = _sealed_raw(aead, b'{"seq":1,"digest":"d1","time":"t","name":"' + escape + b'"}', ad)
    with pytest.raises(SyncTamperedError):
        unseal(aead, blob, ad, "The head")
    with pytest.raises(SyncTamperedError):
        Head.opened(aead, keys.vault_id, device, blob)
    keys.wipe()


def test_escaped_pairs_and_any_real_text_open_as_written() -> None:
    keys = VaultKeys(bytearray(range(32)), "0123456789abcdef")
    aead, ad = keys.sync_aead("bundle"), b"ad"
    pair = _sealed_raw(aead, b'{"t":"\\ud83d\\ude00 \\u7b46"}', ad)  # an escaped pair is one character
    assert unseal(aead, pair, ad, "x") == {"t": "😀 筆"}
    value = {"t": "筆記 😀 \\ud800 literal backslash-u", "n": [1, 2]}
    assert unseal(aead, seal(aead, value, ad), ad, "x") == value
    keys.wipe()
