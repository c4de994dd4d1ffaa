"""Known-answer vectors and KDF/passphrase rules."""

from __future__ import annotations

import unicodedata

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id

from memories_tui.errors import InputRefusedError, TamperError, VaultError, WrongPassphraseError
from memories_tui.vault import crypto


def test_argon2id_rfc9106_vector():
    # RFC 9106 §5.3: Argon2id, m=32 KiB, t=3, p=4, with secret and associated data.
    kdf = Argon2id(salt=bytes([2] * 16), length=32, iterations=3, lanes=4, memory_cost=32,
                   ad=bytes([4] * 12), secret=bytes([3] * 8))
    assert kdf.derive(bytes([1] * 32)).hex() == (
        "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")


def test_aes256_gcm_known_answer():
    # McGrew & Viega GCM spec, test case 14: 256-bit zero key, zero IV, one zero block.
    out = AESGCM(bytes(32)).encrypt(bytes(12), bytes(16), None)
    assert out[:16].hex() == "cea7403d4d606b6e074ec5d3baf39d18"
    assert out[16:].hex() == "d0d1c8a799996bf0265b98b5d48ab919"


def test_our_kdf_matches_plain_argon2id():
    params = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
    salt = bytes(range(16))
    expected = Argon2id(salt=salt, length=32, iterations=1, lanes=1, memory_cost=8).derive("pässword".encode())
    assert bytes(crypto.derive_kek("pässword", salt, params)) == expected


def test_nfc_and_nfd_passphrases_derive_the_same_key():
    params = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
    nfc = unicodedata.normalize("NFC", "café 密碼")
    nfd = unicodedata.normalize("NFD", "café 密碼")
    assert nfc != nfd
    assert crypto.derive_kek(nfc, bytes(16), params) == crypto.derive_kek(nfd, bytes(16), params)


def test_empty_passphrase_refused():
    with pytest.raises(InputRefusedError) as err:
        crypto.normalize_passphrase("")
    assert err.value.code == "empty_passphrase"


def test_default_parameters_meet_the_floor_and_weak_ones_are_refused():
    assert crypto.KdfParams().memory_kib >= crypto.MIN_MEMORY_KIB
    with pytest.raises(VaultError):
        crypto.KdfParams(memory_kib=1024, iterations=3, lanes=4).check_creatable()


def test_hostile_kdf_parameters_refused_before_any_work():
    with pytest.raises(VaultError, match="ceiling"):
        crypto.KdfParams.from_dict({"alg": "argon2id", "m": 1 << 40, "t": 3, "p": 4})
    with pytest.raises(VaultError):
        crypto.KdfParams.from_dict({"alg": "scrypt", "m": 8, "t": 1, "p": 1})


def test_wrap_unwrap_binds_header_and_passphrase():
    params = crypto.KdfParams(memory_kib=8, iterations=1, lanes=1)
    kek = crypto.derive_kek("right", bytes(16), params)
    vk = bytearray(range(32))
    wrapped = crypto.wrap_key(kek, vk, b"header")
    assert crypto.unwrap_key(kek, wrapped, b"header") == vk
    with pytest.raises(WrongPassphraseError):
        crypto.unwrap_key(crypto.derive_kek("wrong", bytes(16), params), wrapped, b"header")
    with pytest.raises(WrongPassphraseError):
        crypto.unwrap_key(kek, wrapped, b"other header")


def test_seal_open_with_associated_data():
    key = AESGCM(bytearray(32))
    ad = crypto.length_prefixed("v", "r", "memory", "general", 1)
    nonce, ct = crypto.seal(key, b"secret text", ad)
    assert crypto.open_sealed(key, nonce, ct, ad, "x") == b"secret text"
    with pytest.raises(TamperError):
        crypto.open_sealed(key, nonce, ct, crypto.length_prefixed("v", "r", "memory", "general", 2), "x")


def test_length_prefix_is_unambiguous():
    assert crypto.length_prefixed("ab", "c") != crypto.length_prefixed("a", "bc")


def test_zero_wipes_bytearray():
    buf = bytearray(b"key material")
    crypto.zero(buf)
    assert buf == bytearray(len(buf))
